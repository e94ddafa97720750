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
