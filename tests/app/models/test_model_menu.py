"""The local model list: GGUF files found on disk (the runtime's models.list), grouped by model with their quantizations, in the menu."""

from __future__ import annotations

import os

import pytest

from app.models.local_model import FileRole, LocalModels
from app.runtime_link import RuntimeLink
from gguf_files import write_gguf
from window_helpers import wait_loaded

pytestmark = pytest.mark.slow


def test_models_are_grouped_by_model_with_their_quantizations_and_bad_files_reported(qtbot, tmp_path, monkeypatch, starter_model):
    models = tmp_path / "models"
    (models / "nested").mkdir(parents=True)
    os.symlink(starter_model, models / starter_model.name)
    meta = {"general.architecture": "llama", "general.basename": "Tiny-Llama", "general.size_label": "1B", "general.finetune": "Chat", "llama.block_count": 1}
    write_gguf(models / "nested" / "tiny-q8.gguf", metadata={**meta, "general.file_type": 7}, tensor_elements=1000)
    write_gguf(models / "nested" / "tiny-q4.gguf", metadata={**meta, "general.file_type": 15}, tensor_elements=1000)
    write_gguf(models / "nested" / "tiny-00002-of-00002.gguf", metadata=meta, tensor_elements=10)  # a later shard: skipped
    (models / "broken.gguf").write_bytes(b"nope")
    # The runtime this link starts lists this folder, an empty Hugging Face cache and no added files.
    monkeypatch.setenv("LOKAL_MODELS_DIR", str(models))
    monkeypatch.setenv("LOKAL_DATA_DIR", str(tmp_path / "data"))
    link = RuntimeLink(auto_restart=False)
    scanner = LocalModels(link, parent=link)
    try:
        with qtbot.waitSignal(scanner.sig_scanned, timeout=60_000):
            link.start()
            scanner.scan()  # asked while the runtime starts: answered once it is ready
        tree = scanner.model
        groups = {tree.item(r).text(): [tree.item(r).child(c).data(FileRole) for c in range(tree.item(r).rowCount())] for r in range(tree.rowCount())}
        assert set(groups) == {"SmolLM2 135M Instruct", "Tiny Llama 1B Chat"}
        assert [f.quantization for f in groups["Tiny Llama 1B Chat"]] == ["Q4_K_M", "Q8_0"]
        assert groups["SmolLM2 135M Instruct"][0].quantization == "Q4_1" and groups["SmolLM2 135M Instruct"][0].size == starter_model.stat().st_size
        assert list(scanner.errors) == [str(models / "broken.gguf")]
        assert "not a usable GGUF file" in scanner.errors[str(models / "broken.gguf")]
        # A file put there later is in the next list.
        write_gguf(models / "tiny-f16.gguf", metadata={**meta, "general.file_type": 1}, tensor_elements=1000)
        with qtbot.waitSignal(scanner.sig_scanned, timeout=60_000):
            scanner.scan()
        assert len(scanner.files) == 4
    finally:
        scanner.stop()
        link.close()
        link.deleteLater()  # Qt deletes it, after its process's deferred deletion
        qtbot.wait(20)


def test_the_model_menu_lists_files_and_status_bar_shows_model_quant_backend(qtbot, window, starter_model):
    qtbot.waitUntil(lambda: not window.local_models.scanning and bool(window.local_models.files), timeout=60_000)
    window.model_menu.rebuild()
    actions = [a for a in window.model_menu.actions() if a.data()]
    starter = [a for a in actions if os.path.realpath(a.data()) == os.path.realpath(starter_model)]
    assert starter and starter[0].isChecked() and starter[0].text().startswith("Q4_1\t")
    assert any(a.isSeparator() and a.text() == "SmolLM2 135M Instruct" for a in window.model_menu.actions())
    assert window.model_label.text() == "SmolLM2 135M Instruct  ·  Q4_1  ·  CPU"
    # Picking a file loads it and shows progress; the window stays live meanwhile.
    progress = []
    window.session.sig_progress.connect(progress.append)
    window.session.loaded = None
    chosen = starter[0].data()
    starter[0].trigger()
    wait_loaded(qtbot, window)
    assert progress and progress[-1] == pytest.approx(1.0)
    assert window.store.get_state("model_path") == chosen
