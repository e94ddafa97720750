"""An empty conversation's welcome: the real window over the real runtime and the starter model, offscreen."""

from __future__ import annotations

from PySide6.QtCore import Qt

from app.catalog.browser import ModelBrowserDialog
from app.chat.widgets.welcome import Welcome
from window_helpers import open_window, wait_loaded


def test_the_welcome_names_the_model_says_the_starter_is_small_and_offers_the_catalog(qtbot, store_path, starter_model, english):
    window = open_window(qtbot, store_path, starter_model, load=False)
    try:
        welcome = window.chat_view.welcome
        assert welcome.isVisible()
        assert welcome.heading.text() == "No model is loaded"
        window.load_model(str(starter_model))
        qtbot.waitUntil(lambda: welcome.heading.text() == "Getting the model ready…", timeout=5_000)
        assert "SmolLM2-135M-Instruct.Q4_1.gguf" in welcome.detail.text()
        wait_loaded(qtbot, window)
        assert welcome.heading.text() == f"Chat with {window.session.display_name}"
        assert welcome.detail.text().startswith("Q4_1, on the CPU")
        assert welcome.advice_box.isVisible() and "starter model" in welcome.advice.text()
        qtbot.mouseClick(welcome.browse, Qt.MouseButton.LeftButton)
        browser = window.catalog.browser
        assert isinstance(browser, ModelBrowserDialog) and browser.isVisible()
        browser.close()
        assert welcome.browse in window.chat_view.focusables(), "Tab reaches the welcome's buttons"
    finally:
        window.shutdown()


def test_an_example_goes_into_the_message_box_and_undo_brings_back_what_was_typed(qtbot, window, english):
    welcome = window.chat_view.welcome
    window.composer.edit.setPlainText("my own half-written question")
    example = welcome.examples[1]
    qtbot.mouseClick(example, Qt.MouseButton.LeftButton)
    assert window.composer.text() == example.text()
    assert window.focusWidget() is window.composer.edit, "the focus goes to the message box, ready to send"
    window.composer.edit.undo()
    assert window.composer.text() == "my own half-written question"


def test_the_welcome_leaves_once_a_message_is_sent_and_comes_back_in_a_new_conversation(qtbot, window, english):
    welcome = window.chat_view.welcome
    assert welcome.isVisible()
    window.chat.send("Hello")
    qtbot.waitUntil(lambda: not welcome.isVisible(), timeout=5_000)
    assert welcome.browse not in window.chat_view.focusables() and welcome.examples[0] not in window.chat_view.focusables()
    qtbot.waitUntil(lambda: not window.chat.generating, timeout=60_000)
    window.chat.new_conversation()
    qtbot.waitUntil(welcome.isVisible, timeout=5_000)


def test_a_model_other_than_the_starter_gets_no_advice_to_change_it(qtbot):
    welcome = Welcome()
    qtbot.addWidget(welcome)
    welcome.show()
    welcome.show_model("Qwen3 4B", "Q4_K_M", on_gpu=True, starter=False)
    assert not welcome.advice_box.isVisible()
    assert "on the GPU" in welcome.detail.text()
    welcome.show_remote("gpt-oss-20b")
    assert not welcome.advice_box.isVisible() and "remote endpoint" in welcome.detail.text()
    chosen: list[str] = []
    welcome.sig_example_chosen.connect(chosen.append)
    welcome.examples[0].click()
    assert chosen == [welcome.examples[0].text()]


def test_in_a_narrow_pane_the_examples_wrap_their_words_instead_of_widening_the_chat(qtbot):
    from PySide6.QtWidgets import QApplication

    welcome = Welcome()
    qtbot.addWidget(welcome)
    assert welcome.minimumSizeHint().width() < 300, "the welcome would hold the chat wider than a narrow pane"
    welcome.resize(300, 600)
    welcome.show()
    qtbot.waitExposed(welcome)
    QApplication.processEvents()
    line = welcome.examples[0].label.fontMetrics().lineSpacing()
    for example in welcome.examples:
        assert example.geometry().right() < 300, f"{example.text()!r} runs past the pane"
        assert example.label.height() >= example.label.heightForWidth(example.label.width()), f"{example.text()!r} is cut"
    longest = welcome.examples[1]
    assert longest.label.height() >= 2 * line, "the longest example should take two lines at 300 px"
    welcome.resize(900, 600)
    QApplication.processEvents()
    assert all(example.label.height() < 2 * line for example in welcome.examples), "with room, each example is one line"
