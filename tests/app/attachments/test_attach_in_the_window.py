"""Attaching files in the real window, over the real runtime process and the starter model, offscreen.

By the button's file dialog, by a drop on the message box, by a paste; chips with their size, removed by
the keyboard; bad files (unreadable, too big, a format Lokal cannot read, a broken picture, a picture for
a model that cannot see) refused with a message that names the file and the reason, the text typed and
the other attachments untouched; the message's attachments kept in the store and shown again when the
conversation is reopened.
"""

from __future__ import annotations

import os

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtTest import QTest
from PySide6.QtGui import QColor, QDragEnterEvent, QDragMoveEvent, QDropEvent, QGuiApplication, QImage
from PySide6.QtWidgets import QApplication, QFileDialog, QMenu

from app.attachments import kinds
from app.attachments.widgets.chips import Thumbnail
from app.storage import Store
from app.ui.shortcuts import shortcut_rows
from waiting import qt_wait_until

pytestmark = pytest.mark.slow


@pytest.fixture
def win(win):
    """The shared window with the loaded model's pictures turned off, and the clipboard left empty."""
    win.attacher.set_model(win.session.display_name, False, n_ctx=win.session.loaded.n_ctx)
    yield win
    QGuiApplication.clipboard().clear()  # mime data left on the offscreen clipboard crashes the interpreter's exit


def chips_ready(window, n):
    qt_wait_until(lambda: len(window.attacher.pending.items) == n and not window.attacher.pending.reading, 60, f"{n} attachment(s) read by the runtime")


def drag_and_drop(widget, paths):
    """What a drag from a file manager sends: enter, move, drop (Qt's text box takes a drop only after the first two)."""
    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    args = (Qt.DropAction.CopyAction, data, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
    for event in (QDragEnterEvent(QPoint(5, 5), *args), QDragMoveEvent(QPoint(5, 5), *args), QDropEvent(QPointF(5, 5), *args)):
        QApplication.sendEvent(widget, event)
        assert event.isAccepted(), type(event).__name__


def text_file(tmp_path, name="notes.txt", text="The launch code is PELICAN-7. " * 20):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_attach_button_opens_a_file_dialog_whose_choice_becomes_a_chip(win, tmp_path):
    path = text_file(tmp_path)
    win.composer.attach_button.click()
    dialog = win.composer.file_dialog
    assert isinstance(dialog, QFileDialog) and dialog.isVisible()
    assert not any("Pictures" in f for f in dialog.nameFilters())  # the starter model cannot see: no pictures offered
    dialog.filesSelected.emit([str(path)])
    dialog.reject()
    chips_ready(win, 1)
    (chip,) = win.composer.chips.chips
    assert chip.label.text().startswith("notes.txt")
    assert win.attacher.take()[0].size == path.stat().st_size


def test_a_dropped_file_and_a_pasted_file_become_chips_and_the_text_stays(win, tmp_path):
    first, second = text_file(tmp_path, "a.md", "# A\n\ntext"), text_file(tmp_path, "b.py", "print('b')\n")
    win.composer.edit.setPlainText("keep me")
    drag_and_drop(win.composer.edit.viewport(), [first])
    pasted = QMimeData()
    pasted.setUrls([QUrl.fromLocalFile(str(second))])
    QGuiApplication.clipboard().setMimeData(pasted)
    win.composer.edit.paste()
    chips_ready(win, 2)
    assert [c.label.text().split(" · ")[0] for c in win.composer.chips.chips] == ["a.md", "b.py"]
    assert win.composer.text() == "keep me"  # no path typed into the box


def test_a_chip_is_removed_with_the_keyboard_before_sending(win, qtbot, tmp_path):
    win.attacher.add_paths([str(text_file(tmp_path, "one.txt")), str(text_file(tmp_path, "two.txt"))])
    chips_ready(win, 2)
    assert win.composer.chips.focusables()[0] in win.focus_order()  # Tab reaches it
    button = win.composer.chips.chips[0].remove_button
    button.setFocus()
    qtbot.keyClick(button, Qt.Key.Key_Delete)
    qt_wait_until(lambda: [p.name for p in win.attacher.pending.items] == ["two.txt"], 5, "one.txt removed")
    assert win.focusWidget() is win.composer.chips.chips[0].remove_button  # the focus stays among the chips


@pytest.mark.parametrize("case", ["folder", "vanished", "too_big", "wrong_type", "empty", "broken_picture", "picture_without_vision"])
def test_a_bad_file_is_refused_with_its_reason_and_nothing_is_lost(win, tmp_path, case):
    good = text_file(tmp_path, "good.txt")
    win.attacher.add_path(str(good))
    chips_ready(win, 1)
    win.composer.edit.setPlainText("my question")
    if case == "folder":
        bad, reason = tmp_path / "folder", "it is a folder"
        bad.mkdir()
    elif case == "vanished":
        bad, reason = tmp_path / "gone.txt", "cannot be read"
        os.symlink(tmp_path / "nowhere.txt", bad)
    elif case == "too_big":
        bad, reason = tmp_path / "huge.csv", "the most Lokal takes is 64 MiB"
        with open(bad, "wb") as f:
            f.truncate(kinds.MAX_DOCUMENT_BYTES + 1)
    elif case == "wrong_type":
        bad, reason = tmp_path / "setup.exe", "Lokal cannot read .exe files"
        bad.write_bytes(b"MZ")
    elif case == "empty":
        bad, reason = tmp_path / "empty.txt", "the file is empty"
        bad.write_bytes(b"")
    elif case == "broken_picture":
        win.attacher.set_model("a vision model", True)
        bad, reason = tmp_path / "broken.png", "not a picture Lokal can read"
        bad.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)
    else:
        bad, reason = tmp_path / "cat.png", "cannot see pictures"
        image = QImage(8, 8, QImage.Format.Format_RGB32)
        image.fill(QColor("orange"))
        image.save(str(bad))
    assert not win.attacher.add_path(str(bad))
    assert win.banner.isVisible() and bad.name in win.banner_text.text() and reason in win.banner_text.text()
    assert [p.name for p in win.attacher.pending.items] == ["good.txt"] and win.composer.text() == "my question"


def test_a_file_the_runtime_cannot_read_is_taken_off_with_the_runtime_s_reason(win, tmp_path):
    """What only the runtime can tell (a PDF that is not one): the chip goes, the banner says why, the rest stays."""
    good = text_file(tmp_path, "good.txt")
    win.attacher.add_path(str(good))
    chips_ready(win, 1)
    win.composer.edit.setPlainText("my question")
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4\nthis is not a PDF at all\n")
    assert win.attacher.add_path(str(broken))  # the window cannot tell: it asks the runtime
    qt_wait_until(lambda: not win.attacher.pending.reading, 60, "the runtime's answer about broken.pdf")
    assert [p.name for p in win.attacher.pending.items] == ["good.txt"] and win.composer.text() == "my question"
    assert win.banner.isVisible() and win.banner_text.text().startswith("broken.pdf was not attached: not a readable PDF")


def test_a_pasted_picture_for_a_model_that_cannot_see_says_why(win):
    image = QImage(8, 8, QImage.Format.Format_RGB32)
    image.fill(QColor("teal"))
    data = QMimeData()
    data.setImageData(image)
    QGuiApplication.clipboard().setMimeData(data)
    win.composer.edit.setPlainText("look")
    win.composer.edit.paste()
    assert "cannot see pictures" in win.banner_text.text() and win.session.display_name in win.banner_text.text()
    assert win.attacher.pending.items == [] and win.composer.text() == "look"


def test_a_sent_message_keeps_its_attachments_and_a_reopened_conversation_shows_them(win, qtbot, tmp_path):
    path = text_file(tmp_path, "facts.txt")
    picture = tmp_path / "sky.png"
    image = QImage(640, 320, QImage.Format.Format_RGB32)
    image.fill(QColor("skyblue"))
    image.save(str(picture))
    win.attacher.set_model("a vision model", True)  # the window's side of a picture; the runtime's is `images`'
    win.attacher.add_paths([str(path), str(picture)])
    chips_ready(win, 2)
    attached = win.attacher.take()
    conv = win.chat.current
    # Stored with the message, as sent, without asking the runtime for a reply about a picture it cannot see.
    message = win.chat.store.add_message(conv.id, "user", "what is in these?", attached=attached)
    win.chat.open(None)
    win.chat.open(conv.id)
    qt_wait_until(lambda: win.chat_view.widgets and win.chat_view.widgets[-1].message.id == message.id and win.chat_view.widgets[-1].isVisible(), 10, "the message shown")
    shown = win.chat_view.widgets[-1].attached
    assert shown.isVisibleTo(win) and len(shown.parts) == 2
    (thumbnail,) = shown.thumbnails()
    assert isinstance(thumbnail, Thumbnail) and thumbnail.attachment.name == "sky.png"
    thumbnail.setFocus()
    qtbot.keyClick(thumbnail, Qt.Key.Key_Return)  # the keyboard opens it as a click does
    viewer = thumbnail.viewer
    assert viewer is not None and viewer.isVisible()
    assert viewer.pixmap.width() == 640 and viewer.pixmap.height() == 320  # the picture itself, not its thumbnail
    viewer.close()
    again = Store(win.store.path)
    try:
        assert [a.name for a in again.message(message.id).attachments] == ["facts.txt", "sky.png"]
    finally:
        again.close()


def test_sending_waits_until_the_runtime_has_read_every_attachment(win, tmp_path):
    win.composer.edit.setPlainText("summarise it")
    assert win.composer.button.isEnabled()
    win.attacher.add_path(str(text_file(tmp_path, "long.txt")))
    assert win.attacher.pending.reading and not win.composer.button.isEnabled()  # the chip says "reading…"
    assert win.composer.chips.chips[0].label.text() == "long.txt · reading…"
    chips_ready(win, 1)
    assert win.composer.button.isEnabled()


def test_nothing_is_attached_while_replies_come_from_a_remote_endpoint(win, tmp_path):
    win.attacher.set_model("gpt-remote", False, remote=True)
    win.composer.edit.setPlainText("hello")
    assert not win.attacher.add_path(str(text_file(tmp_path)))
    assert "remote endpoint (gpt-remote)" in win.banner_text.text() and "notes.txt" in win.banner_text.text()
    assert win.attacher.pending.items == [] and win.composer.text() == "hello"


def long_text(chars):
    lines = (f"{i:05d} GET /api/v1/items/{i} 200" for i in range(chars // 20))
    return "\n".join(lines)[:chars]


def test_pasted_text_too_long_for_the_context_becomes_a_file_and_ctrl_shift_v_puts_it_in_the_message(win, qtbot, monkeypatch):
    from app.attachments.service import PASTE_CHARS_PER_TOKEN

    win.features["attachments"].follow_model()  # as after each load: the attacher learns the model's context
    assert win.attacher.n_ctx == 2048  # window_helpers.N_CTX
    PASTE_AS_FILE_CHARS = PASTE_CHARS_PER_TOKEN * 2048 + 1
    monkeypatch.setattr(win.features["attachments"], "offered", True)  # too long for the tests' context: no offer of an embedding model

    win.composer.edit.setPlainText("why? ")
    win.composer.edit.moveCursor(win.composer.edit.textCursor().MoveOperation.End)
    QGuiApplication.clipboard().setText(long_text(PASTE_AS_FILE_CHARS - 1))
    win.composer.edit.paste()  # shorter: typed in, as any paste
    assert win.composer.text() == "why? " + long_text(PASTE_AS_FILE_CHARS - 1) and win.attacher.pending.items == []

    win.composer.edit.setPlainText("why? ")
    text = long_text(PASTE_AS_FILE_CHARS + 5_000)
    QGuiApplication.clipboard().setText(text)
    win.composer.edit.setFocus()
    qtbot.keyClick(win.composer.edit, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)  # Ctrl+V: attached, the box as it was
    assert "attached as a file" in win.statusBar().currentMessage() and "Ctrl+Shift+V" in win.statusBar().currentMessage()  # said
    QGuiApplication.clipboard().setText(text + "\nagain")
    win.composer.edit.paste()
    chips_ready(win, 2)
    assert win.composer.text() == "why? "
    first, second = win.attacher.take()
    assert (first.name, second.name) == ("pasted text.txt", "pasted text 2.txt") and first.kind == "document"
    assert first.size == len(text.encode()) and first.tokens > 1_000  # the runtime read it: its size for the loaded model
    assert win.composer.chips.chips[0].label.text().startswith("pasted text.txt · ")

    win.composer.sent()
    win.composer.edit.setPlainText("")
    win.activateWindow()
    assert QTest.qWaitForWindowActive(win)  # a window's shortcuts fire in the active window
    win.composer.edit.setFocus()
    qtbot.keyClick(win.composer.edit, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)  # Chat ▸ Paste as text in the message
    assert win.composer.text() == text + "\nagain" and win.attacher.pending.items == []
    assert any(row[1] == "Paste as text in the message" and row[2] == "Ctrl+Shift+V" for row in shortcut_rows(win.menuBar().findChildren(QMenu)))


def test_long_pasted_text_stays_in_the_message_while_replies_come_from_a_remote_endpoint(win):
    from app.attachments.service import PASTE_AS_FILE_CHARS

    win.attacher.set_model("gpt-remote", False, remote=True)
    win.composer.edit.setPlainText("")
    QGuiApplication.clipboard().setText(long_text(PASTE_AS_FILE_CHARS + 10))
    win.composer.edit.paste()
    assert win.composer.text() == long_text(PASTE_AS_FILE_CHARS + 10) and win.attacher.pending.items == []  # never lost to a refusal
