"""The Model menu lists a file once, wherever it lies: seen in the window, the starter model was listed
twice under its name when the same file was both in the Hugging Face cache and in the models folder."""

from __future__ import annotations

import os
import shutil

import pytest

from window_helpers import open_window

pytestmark = pytest.mark.slow


def same_file_at(source, target) -> None:
    """A second path to the same bytes that is not a link (a hard link where it can be, else a copy)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def test_the_same_model_file_in_two_places_is_one_menu_entry_that_says_where_it_lives(qtbot, tmp_path, store_path, starter_model):
    cached = tmp_path / "hf-cache" / "models--HuggingFaceTB--SmolLM2-135M-Instruct-GGUF" / "snapshots" / "0123abc" / "smollm2-135m-instruct-q4_1.gguf"
    same_file_at(starter_model, cached)
    window = open_window(qtbot, store_path, starter_model)
    try:
        qtbot.waitUntil(lambda: not window.local_models.scanning and bool(window.local_models.files), timeout=60_000)
        window.model_menu.rebuild()
        entries = [a for a in window.model_menu.actions() if a.data() and a.text().startswith("Q4_1\t")]
        assert len(entries) == 1, [a.data() for a in entries]
        (entry,) = entries
        assert entry.isChecked(), "the loaded model's entry is checked, whichever of its paths was loaded"
        tip = entry.toolTip()
        assert str(cached) in tip and str(starter_model) in tip and tip.startswith("Where it lives: ")
        headings = [a.text() for a in window.model_menu.actions() if a.isSeparator() and a.text()]
        assert headings.count("SmolLM2 135M Instruct") == 1
    finally:
        window.shutdown()


def test_the_entry_of_a_file_in_two_places_is_named_by_its_best_spelled_path_whichever_is_listed_first():
    """A header that writes its name in lower case is named after the file's path: the same file as
    SmolLM2-135M-Instruct.Q4_1.gguf and as "smol copy.gguf" (dropped on the window) is one entry, named the first way."""
    from app.models.local_model import one_per_identity
    from runtime.protocol import LocalModel

    spelled = LocalModel("a", "/models/SmolLM2-135M-Instruct.Q4_1.gguf", "n", "bundled", 1, group="SmolLM2 135M Instruct", identity="same")
    copied = LocalModel("b", "/elsewhere/smol copy.gguf", "n", "added", 1, group="Smollm2 135M", identity="same")
    other = LocalModel("c", "/models/other.gguf", "n", "bundled", 1, group="other", identity="other")
    for files in ([copied, spelled, other], [spelled, copied, other]):
        kept, copies = one_per_identity(files)
        assert [(m.path, m.group) for m in kept] == [(files[0].path, "SmolLM2 135M Instruct"), ("/models/other.gguf", "other")]
        assert copies[files[0].path] == [files[0].path, files[1].path]
