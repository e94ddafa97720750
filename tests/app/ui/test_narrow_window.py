"""The window fits half of a 1920 px screen, whatever the conversation's title or the model's name: a long one is
cut with "…" and shown whole in its tooltip, instead of setting the window's minimum width (909 px before with a
first conversation, 1,670 with a long title and model name: bench/window_width.py). At its narrowest the title keeps
its first words: the model button gives way first. The real window offscreen, over the real runtime and the starter model."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QApplication, QToolButton

from app.ui.elided_label import MIN_WIDTH, ElidedLabel
from app.ui.layout import narrowest
from app.ui.top_bar import MODEL_NAME_WIDTH, TITLE_ROOM, fit_model_name

HALF_SCREEN = 960  # a window snapped to one side of a 1920 px screen, its frame included
LONG_TITLE = "Planning the family trip to Lisbon in May: flights, a flat near Alfama, day trips to Sintra and Cascais, and a budget"
LONG_MODEL = "DeepSeek R1 Distill Qwen 32B Instruct Abliterated Uncensored Merge v2 · Q4_K_M"


def settle() -> None:
    for _ in range(5):
        QApplication.processEvents()


def test_a_label_gives_up_width_and_holds_its_text_whole(qtbot):
    label = ElidedLabel(LONG_TITLE, whole_in_tooltip=True)
    qtbot.addWidget(label)
    label.resize(150, 30)
    label.show()
    settle()
    assert label.minimumSizeHint().width() == MIN_WIDTH and label.sizeHint().width() > 500
    assert label.shown().endswith("…") and LONG_TITLE.startswith(label.shown()[:-1]) and label.fontMetrics().horizontalAdvance(label.shown()) <= 150
    assert label.text() == LONG_TITLE and label.toolTip() == LONG_TITLE and label.accessibleName() == LONG_TITLE
    label.resize(label.sizeHint().width(), 30)
    settle()
    assert label.shown() == LONG_TITLE and label.toolTip() == ""  # whole: no tooltip repeats it


@pytest.mark.slow
def test_a_long_title_and_a_long_model_name_leave_the_window_narrow_enough_for_half_a_screen(module_window, english):
    window = module_window
    conversation = window.chat.new_conversation()
    window.chat.rename(conversation.id, LONG_TITLE)
    window.model_button.set_model_name(LONG_MODEL)
    window.model_status.line.model_label.setText(f"{LONG_MODEL}  ·  CPU")
    settle()
    assert window.metrics_panel.isVisible() and window.sidebar.isVisible()
    assert window.minimumSizeHint().width() <= HALF_SCREEN - 16
    window.resize(HALF_SCREEN - 16, 700)
    settle()
    assert window.width() == HALF_SCREEN - 16
    sides = [narrowest(pane) for pane in (window.sidebar, window.metrics_panel)]
    assert window.splitter.sizes()[::2] == sides and window.splitter.sizes()[1] > 418  # the panes gave way first: the chat had 418 px at 960
    assert window.title.text() == LONG_TITLE and window.title.shown().endswith("…") and window.title.toolTip() == LONG_TITLE
    assert "…" in window.model_button.text() and window.model_button.text().endswith(" · Q4_K_M") and LONG_MODEL in window.model_button.toolTip()
    assert window.model_button.fontMetrics().horizontalAdvance(window.model_button.text()) <= MODEL_NAME_WIDTH
    assert window.composer.edit.placeholderText() == "Message the model"  # the whole hint wrapped, and was cut off
    window.model_status.show_model()  # the loaded model's own name again
    window.resize(1360, 800)
    settle()
    assert window.composer.edit.placeholderText() == "Message the model  (Enter to send, Shift+Enter for a new line)"
    assert window.splitter.sizes()[::2] == window.splitter.chosen  # and got their widths back first


def test_a_model_name_is_cut_before_its_quantization_while_a_letter_of_it_fits(qapp):
    metrics = QFontMetrics(QApplication.font())
    tail = metrics.horizontalAdvance(" · Q4_K_M")
    assert fit_model_name(LONG_MODEL, metrics, 10_000) == LONG_MODEL
    shown = fit_model_name(LONG_MODEL, metrics, tail + 60)
    assert shown.endswith("… · Q4_K_M") and LONG_MODEL.startswith(shown.split("…")[0]) and shown[0] == "D"
    assert metrics.horizontalAdvance(shown) <= tail + 60
    too_narrow = fit_model_name(LONG_MODEL, metrics, tail)  # no letter of the name beside it: the name's beginning instead
    assert too_narrow.endswith("…") and LONG_MODEL.startswith(too_narrow[:-1]) and "Q4_K_M" not in too_narrow
    remote = fit_model_name("meta-llama/Llama-3.3-70B-Instruct-Turbo", metrics, 80)  # a server's model: no quantization to keep
    assert remote.endswith("…") and "meta-llama/Llama-3.3-70B-Instruct-Turbo".startswith(remote[:-1])


@pytest.mark.slow
def test_at_its_narrowest_the_window_keeps_the_titles_first_words_and_cuts_the_model_name(module_window, english):
    """Before, the model button kept its whole name (220 px for the starter's) and the title went down to two letters
    and "…"; a long model name widened the window to 862 px."""
    window = module_window
    conversation = window.chat.new_conversation()
    settle()
    narrowest_with_short_names = window.minimumSizeHint().width()
    window.chat.rename(conversation.id, LONG_TITLE)
    window.model_button.set_model_name(LONG_MODEL)
    settle()
    assert window.minimumSizeHint().width() == narrowest_with_short_names  # opening another conversation does not widen the window
    window.resize(narrowest_with_short_names, 700)
    settle()
    title, button, bar = window.title, window.model_button, window.title.parentWidget()
    assert window.width() == narrowest_with_short_names and title.width() >= TITLE_ROOM
    assert title.shown().startswith("Planning the") and title.shown().endswith("…") and title.toolTip() == LONG_TITLE
    assert "…" in button.text() and button.text().endswith(" · Q4_K_M")
    assert button.toolTip().startswith(LONG_MODEL + "\n") and button.accessibleName() == f"Model: {LONG_MODEL}"
    assert QToolButton.sizeHint(button).width() <= button.width()  # what it shows fits it: cut by "…", not by its edge
    in_a_row = [title, button, window.settings_button, window.metrics_button]
    assert all(left.geometry().right() < right.geometry().left() for left, right in zip(in_a_row, in_a_row[1:]))
    assert window.metrics_button.geometry().right() < bar.width()
    window.resize(1360, 800)
    settle()
    assert button.text().endswith(" · Q4_K_M") and button.fontMetrics().horizontalAdvance(button.text()) <= MODEL_NAME_WIDTH
    assert title.width() > TITLE_ROOM
    window.model_status.show_model()
    settle()
    assert button.text() == "SmolLM2 135M Instruct · Q4_1" and button.toolTip() == "Choose the model and quantization"


@pytest.mark.slow
def test_files_with_long_names_wrap_their_chips_instead_of_widening_the_window(module_window, english, tmp_path):
    from waiting import qt_wait_until

    window = module_window
    window.chat.new_conversation()
    names = ["quarterly-financial-report-2026-final-v3.md", "meeting-notes-board-of-directors-november.txt",
             "architecture-decision-record-0042-kv-cache.md", "customer-interview-transcripts-batch-7.txt"]
    for name in names:
        (tmp_path / name).write_text("The harbour opens at six. " * 12, encoding="utf-8")
    try:
        assert window.attacher.add_paths([str(tmp_path / n) for n in names]) == 4
        qt_wait_until(lambda: not window.attacher.pending.reading, 60, "the runtime reading the files")
        settle()
        assert window.minimumSizeHint().width() <= HALF_SCREEN - 16  # a row of four set it at 1,384 px
        window.resize(HALF_SCREEN - 16, 700)
        settle()
        chips = window.composer.chips.chips
        assert len({chip.y() for chip in chips}) > 1  # on more than one line
        assert all(chip.geometry().right() <= window.composer.chips.width() for chip in chips)
        for chip, name in zip(chips, names):
            shown = chip.label.text()
            assert "…" in shown and shown.endswith(" tokens") and shown.split("…")[0] in name  # the name cut in its middle, the size whole
            assert chip.toolTip().startswith(name + " · ") and chip.accessibleName().startswith(name)
    finally:
        window.composer.sent()
        window.resize(1360, 800)


def test_an_ampersand_in_a_model_name_is_shown_not_taken_for_a_shortcut(qtbot):
    from app.ui.top_bar import ModelButton

    button = ModelButton()
    qtbot.addWidget(button)
    button.set_model_name("Q&A Tuned 1B · Q4_K_M")
    button.resize(button.sizeHint())
    button.show()
    qtbot.waitExposed(button)
    assert button.text() == "Q&&A Tuned 1B · Q4_K_M"  # shown as "Q&A", with no underlined letter
    assert button.toolTip() == button._tip, "the whole name fits: no second copy of it in the tooltip"
