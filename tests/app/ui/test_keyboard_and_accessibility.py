"""The real window from the keyboard alone, as a screen-reader user meets it.

- Tab walks the whole window in reading order, and every widget it reaches has an accessible name and
  description (what a screen reader says for it).
- Send, stop, regenerate, edit, new chat, the Model menu and the conversation settings work with keys only.
- Every menu opens with Alt and its letter, and the arrow keys reach each of its commands.
- A streaming reply is announced politely, in whole sentences, a few times per reply, not per token.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAccessible
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractSpinBox, QApplication, QDialog, QWidget

from app.chat.controller import ConversationSettings
from app.storage import store as st
from app.ui.accessibility import takes_tab_focus
from window_helpers import wait_reply

pytestmark = pytest.mark.slow

ANSWER_WITH_CODE = "Use `sum`:\n\n```python\nprint(sum([1, 2, 3]))\n```\n\nThat prints 6."


def focused() -> QWidget:
    return QApplication.focusWidget()


def press(qtbot, key, modifier=Qt.KeyboardModifier.NoModifier, target: QWidget | None = None) -> None:
    target = target or focused() or QApplication.activeWindow()
    assert target is not None, "no widget has the keyboard focus"
    qtbot.keyClick(target, key, modifier)


def back_to(window) -> None:
    """After a dialog closes, the offscreen platform does not give the window back its activation by itself."""
    window.activateWindow()
    assert QTest.qWaitForWindowActive(window)


def spoken(widget: QWidget, what: QAccessible.Text) -> str:
    interface = QAccessible.queryAccessibleInterface(widget)
    return interface.text(what).strip() if interface is not None else ""


@pytest.fixture
def window(qtbot, module_window):
    back_to(module_window)
    return module_window


def reader_facing(widget: QWidget) -> QWidget:
    """A spin box's inner line edit takes the focus, but the spin box is what a screen reader names."""
    parent = widget.parentWidget()
    return parent if isinstance(parent, QAbstractSpinBox) else widget


def seed_conversation(window) -> None:
    conv = window.chat.new_conversation("Summing numbers")
    window.store.add_message(conv.id, "user", "How do I add up a list?")
    window.store.add_message(conv.id, "assistant", ANSWER_WITH_CODE, state=st.COMPLETE)
    window.chat.current = None
    window.chat.open(conv.id)


def test_tab_walks_the_window_in_reading_order_and_every_stop_has_a_name_and_description(qtbot, window):
    seed_conversation(window)
    window.chat.send("Say hi.")
    wait_reply(qtbot, window)
    window.sidebar.new_button.setFocus(Qt.FocusReason.TabFocusReason)
    visited = []
    for _ in range(200):
        widget = focused()
        if visited and widget is visited[0]:
            break
        visited.append(widget)
        press(qtbot, Qt.Key.Key_Tab)
    else:
        pytest.fail(f"Tab never came back to the start: {[w.objectName() or type(w).__name__ for w in visited[-10:]]}")

    nameless = [(type(w).__name__, w.objectName()) for w in visited if not spoken(w, QAccessible.Text.Name)]
    undescribed = [(type(w).__name__, spoken(w, QAccessible.Text.Name)) for w in visited if not spoken(w, QAccessible.Text.Description)]
    assert not nameless, f"focusable widgets without an accessible name: {nameless}"
    assert not undescribed, f"focusable widgets without an accessible description: {undescribed}"

    # Everything that can take focus is reached, in reading order: list, top bar, messages, composer.
    reachable = [w for w in window.focus_order() if takes_tab_focus(w)]
    missing = [spoken(w, QAccessible.Text.Name) or type(w).__name__ for w in reachable if w not in visited]
    assert not missing, f"Tab never reaches: {missing}"
    order = [visited.index(w) for w in (window.sidebar.list, window.model_button, window.chat_view, window.composer.edit)]
    assert order == sorted(order), order
    message_stops = [w for w in visited if window.chat_view.isAncestorOf(w)]
    assert all(visited.index(window.model_button) < visited.index(w) < visited.index(window.composer.edit) for w in message_stops)
    assert any(spoken(w, QAccessible.Text.Name) == "Copy code" for w in message_stops)  # the code block's button
    # Shift+Tab goes back the same way.
    window.composer.edit.setFocus(Qt.FocusReason.TabFocusReason)
    press(qtbot, Qt.Key.Key_Backtab)
    assert focused() is visited[visited.index(window.composer.edit) - 1]


def test_send_stop_regenerate_edit_new_chat_model_menu_and_settings_with_the_keyboard_only(qtbot, window):
    window.chat.default_settings = ConversationSettings(temperature=0.8, max_tokens=8, n_ctx=2048, seed=4)
    # New chat: Ctrl+N, and the cursor is in the message box.
    window.composer.edit.setFocus()
    before = window.chat.current
    press(qtbot, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert window.chat.current is not None and window.chat.current is not before and focused() is window.composer.edit

    # Settings: Ctrl+, opens them; Tab to "Max tokens per reply", type, Enter saves.
    press(qtbot, Qt.Key.Key_Comma, Qt.KeyboardModifier.ControlModifier)
    dialog = window.settings_dialog
    qtbot.waitUntil(lambda: dialog.isVisible() and focused() is not None and dialog.isAncestorOf(focused()), timeout=5_000)
    for _ in range(12):
        if focused() is dialog.max_tokens or dialog.max_tokens.isAncestorOf(focused()):
            break
        press(qtbot, Qt.Key.Key_Tab)
    assert dialog.max_tokens.isAncestorOf(focused()) or focused() is dialog.max_tokens
    press(qtbot, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(focused(), "400")
    press(qtbot, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=5_000)
    assert window.chat.settings().max_tokens == 400
    back_to(window)

    # Send: type and Enter. Stop: Esc in the message box.
    window.composer.edit.setFocus()
    qtbot.keyClicks(window.composer.edit, "Write a long story about a lighthouse.")
    press(qtbot, Qt.Key.Key_Return)
    assert window.chat.generating
    qtbot.waitUntil(lambda: len(window.chat.messages.messages[-1].content) > 10, timeout=60_000)
    press(qtbot, Qt.Key.Key_Escape, target=window.composer.edit)
    wait_reply(qtbot, window, timeout=15_000)
    assert window.chat.messages.messages[-1].state == st.STOPPED

    # Regenerate: Ctrl+R; stop it with Ctrl+. from anywhere in the window.
    first_reply = window.chat.messages.messages[-1].id
    press(qtbot, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
    assert window.chat.generating
    qtbot.waitUntil(lambda: len(window.chat.messages.messages[-1].content) > 10, timeout=60_000)
    press(qtbot, Qt.Key.Key_Period, Qt.KeyboardModifier.ControlModifier)
    wait_reply(qtbot, window, timeout=15_000)
    assert window.chat.messages.messages[-1].id != first_reply and window.chat.messages.messages[-1].state == st.STOPPED

    # Edit: Ctrl+E opens your last message in place; Enter resends it.
    press(qtbot, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    assert window.chat_view.editing_row() == 0 and focused() is window.chat_view.widgets[0].editor.edit
    press(qtbot, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(focused(), "Say yes.")
    press(qtbot, Qt.Key.Key_Return)
    assert window.chat.generating and window.chat.messages.messages[0].content == "Say yes."
    press(qtbot, Qt.Key.Key_Escape, target=window.composer.edit)
    wait_reply(qtbot, window, timeout=60_000)

    # The Model menu: Alt+M opens it, the arrows reach "Serve the API…", Enter opens it, Esc closes it.
    press(qtbot, Qt.Key.Key_M, Qt.KeyboardModifier.AltModifier, target=window)
    qtbot.waitUntil(lambda: window.model_menu.isVisible(), timeout=5_000)
    for _ in range(40):
        if (window.model_menu.activeAction() and window.model_menu.activeAction().text()) == "Serve the API…":
            break
        press(qtbot, Qt.Key.Key_Down, target=window.model_menu)
    press(qtbot, Qt.Key.Key_Return, target=window.model_menu)
    api_dialog = window.features["api"].dialog
    qtbot.waitUntil(lambda: api_dialog is not None and api_dialog.isVisible(), timeout=5_000)
    api_dialog.activateWindow()
    press(qtbot, Qt.Key.Key_Escape, target=api_dialog)
    qtbot.waitUntil(lambda: not api_dialog.isVisible(), timeout=5_000)
    # ... and the model button in the top bar: Tab to it, Space opens the same menu, Esc closes it.
    back_to(window)
    window.model_button.setFocus(Qt.FocusReason.TabFocusReason)
    shown = []

    def look_and_close() -> None:  # the button's menu runs an event loop of its own until it closes
        shown.append(window.model_menu.isVisible())
        press(qtbot, Qt.Key.Key_Escape, target=window.model_menu)

    QTimer.singleShot(300, look_and_close)
    press(qtbot, Qt.Key.Key_Space)
    assert shown == [True] and not window.model_menu.isVisible()


def test_every_menu_opens_with_alt_and_its_letter_and_the_arrows_reach_every_command(qtbot, window):
    seed_conversation(window)
    window._update_actions()
    bar = window.menuBar()
    letters = set()
    for menu_action in bar.actions():
        menu = menu_action.menu()
        title = menu.title()
        assert "&" in title, f"the {title} menu has no Alt letter"
        letter = title[title.index("&") + 1].upper()
        assert letter not in letters, f"two menus use Alt+{letter}"
        letters.add(letter)
        window.activateWindow()
        press(qtbot, getattr(Qt.Key, f"Key_{letter}"), Qt.KeyboardModifier.AltModifier, target=window)
        qtbot.waitUntil(menu.isVisible, timeout=5_000)
        reachable = {a for a in menu.actions() if a.isEnabled() and a.isVisible() and not a.isSeparator()}
        reached = set()
        for _ in range(3 * len(menu.actions()) + 2):
            press(qtbot, Qt.Key.Key_Down, target=menu)
            if menu.activeAction() is not None:
                reached.add(menu.activeAction())
        missed = [a.text() for a in reachable - reached]
        assert not missed, f"{title}: the arrows never reach {missed}"
        for action in reachable:
            assert not action.shortcut().isEmpty() or "&" in action.text() or menu is window.model_menu, (
                f"{title} ▸ {action.text()}: give it a shortcut or an Alt letter"
            )
        press(qtbot, Qt.Key.Key_Escape, target=menu)
        qtbot.waitUntil(lambda: not menu.isVisible(), timeout=5_000)
        if QApplication.activePopupWidget() is not None:  # Esc on a menu opened from the bar leaves the bar active
            press(qtbot, Qt.Key.Key_Escape, target=QApplication.activePopupWidget())


def test_a_streaming_reply_is_announced_politely_in_sentences_not_per_token(qtbot, window):
    window.chat.default_settings = ConversationSettings(temperature=0.0, max_tokens=48, n_ctx=2048, seed=1)
    window.chat.new_conversation()
    announced = []
    window.announcer.sig_announced.connect(announced.append)
    deltas = []
    window.link.sig_delta.connect(lambda _id, text: deltas.append(text))
    window.chat.send("Tell me three facts about the moon, one sentence each.")
    wait_reply(qtbot, window)
    reply = window.chat.messages.messages[-1]
    assert reply.record.stats.completion_tokens >= 20, "the reply must be long enough for this test to mean anything"
    assert announced, "nothing was announced"
    assert len(announced) < len(deltas) and len(announced) <= reply.record.stats.completion_tokens / 4
    assert " ".join(announced) == " ".join(reply.content.split())  # all of it, once, in order
    assert window.announcer.politeness == QAccessible.AnnouncementPoliteness.Polite


def test_every_control_of_the_dialogs_and_panels_has_a_name_and_a_description(qtbot, window):
    seed_conversation(window)
    features = window.features
    window.chat_view.edit_last_user_message()
    surfaces = {
        "the message editor": window.chat_view.widgets[0].editor,
        "Conversation settings": window._on_settings(),
        "Serve the API": features["api"].open_dialog(),
        "Add remote endpoint": features["remote"].open_add_dialog(),
        "Saved conversation caches": features["kvcache"].open_dialog(),
        "Models from Hugging Face": window.catalog.open_browser(),
        "Downloads": window.catalog.show_downloads(),
        "Keyboard shortcuts": window.help.open_shortcuts(),
    }
    try:
        for title, surface in surfaces.items():
            qtbot.waitUntil(surface.isVisible, timeout=5_000)
            controls = {reader_facing(w) for w in surface.findChildren(QWidget) if w.focusPolicy() & Qt.FocusPolicy.TabFocus and w.isVisibleTo(surface)}
            assert controls, title
            for control in controls:
                what = f"{title}: {type(control).__name__} {control.objectName()!r} ({spoken(control, QAccessible.Text.Name)!r})"
                assert spoken(control, QAccessible.Text.Name), f"{what} has no accessible name"
                assert spoken(control, QAccessible.Text.Description), f"{what} has no accessible description"
    finally:
        window.chat_view.stop_editing()
        for surface in surfaces.values():
            if isinstance(surface, QDialog):
                surface.close()
        back_to(window)
