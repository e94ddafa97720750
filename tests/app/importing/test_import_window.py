"""File ▸ Import conversations… in the real window: the summary, the list, a second import, a bad file."""

from __future__ import annotations

import json
from pathlib import Path

from app.ui.menus import MenuId
from waiting import qt_wait_until
from window_helpers import open_window

DATA = Path(__file__).parent / "data"


def test_import_from_the_file_menu_shows_a_summary_and_opens_the_first_conversation(qtbot, store_path, starter_model, tmp_path):
    window = open_window(qtbot, store_path, starter_model, load=False)
    try:
        command = window.features["importing"]
        assert command.action in window.menus[MenuId.FILE].actions() and command.action.shortcut().toString() == "Ctrl+Shift+I"
        finished: list[object] = []
        command.sig_finished.connect(finished.append)
        assert command.import_path(DATA / "openwebui-chat-export.json")
        qt_wait_until(lambda: finished, 30, "the import finishing")
        assert command.last_message == "Imported 1 conversations (5 messages) from Open WebUI."
        assert window.chat.current is not None and window.chat.current.title == "Sourdough starter"
        assert window.chat.conversations.rowCount() == 1 and window.chat.messages.rowCount() == 4
        assert window.chat_view.widgets[1].branch_bar.label.text() == "2/2"

        assert command.import_path(DATA / "openwebui-chat-export.json")
        qt_wait_until(lambda: len(finished) == 2, 30, "the second import finishing")
        assert "1 were imported before and were skipped" in command.last_message and window.chat.conversations.rowCount() == 1

        bad = tmp_path / "bad.json"
        bad.write_text('[{"mapping": {"a": {"parent": null, "message": {"author": {"role": 7}, "content": {"content_type": "text"}}}}}]')
        assert command.import_path(bad)
        qt_wait_until(lambda: len(finished) == 3, 30, "the bad import finishing")
        assert command.last_message == "Nothing was imported: [0].mapping.a.message.author.role: expected text, got a number"
        assert window.chat.conversations.rowCount() == 1
    finally:
        window.shutdown()


def test_the_summary_says_how_many_attached_files_were_not_found_on_this_computer(qtbot, store_path, starter_model, tmp_path):
    export = tmp_path / "export.json"
    pdf = {"name": "report.pdf", "kind": "document", "mime": "application/pdf", "size": 5_000}
    export.write_text(json.dumps({"format": "lokal.conversation/1", "title": "Report", "messages": [
        {"role": "user", "content": "Compare them.", "attachments": [dict(pdf, sha256="a" * 64), dict(pdf, name="old.pdf", sha256="b" * 64)]},
        {"role": "assistant", "content": "The new one is shorter.", "reasoning": "Both have tables.", "thinking_ms": 900},
    ]}))
    window = open_window(qtbot, store_path, starter_model, load=False)
    try:
        command = window.features["importing"]
        finished: list[object] = []
        command.sig_finished.connect(finished.append)
        assert command.import_path(export)
        qt_wait_until(lambda: finished, 30, "the import finishing")
        assert command.last_message == (
            "Imported 1 conversations (2 messages) from Lokal. 2 attached files were not found on this computer and are not attached.")
        question, reply = window.chat.messages.messages
        assert question.attachments == [] and reply.reasoning == "Both have tables."
    finally:
        window.shutdown()


def test_a_large_import_leaves_the_window_responsive(qtbot, store_path, starter_model, tmp_path):
    """A ChatGPT export of 12,000 messages (9 MB): parsed, checked and written by `lokal import` in a child process,
    so the event loop never waits on it (done on the window's own threads it held the GIL for seconds). The status
    bar shows how far it got. (That the window's own writes meanwhile wait one short transaction, not the whole
    import, is tests/app/storage/test_import_batches.py's, and bench/import_stall.py's: on a loaded machine the wait
    is as long as the scheduler makes the import's transaction.)"""
    from app.ui.stall_probe import StallProbe
    from chatgpt_exports import write_chatgpt_export

    export = write_chatgpt_export(tmp_path / "conversations.json", conversations=400, messages=30)
    window = open_window(qtbot, store_path, starter_model, load=False)
    probe = StallProbe(interval_ms=5)
    try:
        command = window.features["importing"]
        finished: list[object] = []
        shown: list[tuple[int, int, str]] = []
        command.sig_finished.connect(finished.append)
        command.progress.bar.valueChanged.connect(lambda v: shown.append((v, command.progress.bar.maximum(), command.progress.label.text())))
        probe.start()
        assert command.import_path(export)
        assert command.progress.isVisible() and command.progress.label.text() == "Reading conversations.json…"
        qt_wait_until(lambda: finished, 120, "the import finishing")
        assert command.last_message == "Imported 400 conversations (12000 messages) from ChatGPT."
        assert window.chat.conversations.rowCount() == 400 and not command.progress.isVisible()
        assert probe.ticks > 20
        assert probe.longest_own_ms < 200, f"the import stalled the window for {probe.longest_own_ms:.0f} ms"
        assert [v for v, _, _ in shown] == sorted(v for v, _, _ in shown) and len(shown) > 2, shown
        assert shown[-1] == (400, 400, "Importing conversations.json: 400 of 400 conversations")
    finally:
        probe.stop()
        window.shutdown()


def test_cancel_stops_an_import_midway_and_keeps_nothing_of_it(qtbot, store_path, starter_model, tmp_path):
    """Cancel, once the import has written some conversations: the child is stopped, what it wrote was never listed
    and is deleted, and the next import runs whole."""
    import sqlite3

    from chatgpt_exports import write_chatgpt_export

    export = write_chatgpt_export(tmp_path / "conversations.json", conversations=400, messages=30)
    window = open_window(qtbot, store_path, starter_model, load=False)
    try:
        command = window.features["importing"]
        finished: list[object] = []
        command.sig_finished.connect(finished.append)
        written_when_cancelled: list[int] = []

        def cancel_once_some_are_written(value: int) -> None:
            if value > 0 and not written_when_cancelled:
                with sqlite3.connect(str(store_path)) as db:
                    written_when_cancelled.append(db.execute("SELECT COUNT(*) FROM conversations").fetchone()[0])
                command.progress.cancel.click()

        command.progress.bar.valueChanged.connect(cancel_once_some_are_written)
        assert command.import_path(export)
        qt_wait_until(lambda: finished, 120, "the import being cancelled")
        assert 0 < written_when_cancelled[0] < 400, "cancelled midway, with conversations on disk"
        assert command.last_message == "The import of conversations.json was cancelled: nothing was imported."
        with sqlite3.connect(str(store_path)) as db:
            assert db.execute("SELECT COUNT(*) FROM conversations").fetchone()[0] == 0
            assert db.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == 0
            assert db.execute("SELECT COUNT(*) FROM app_state WHERE key LIKE 'import-pending:%'").fetchone()[0] == 0
        assert window.chat.conversations.rowCount() == 0 and not command.busy and not command.progress.isVisible()

        command.progress.bar.valueChanged.disconnect(cancel_once_some_are_written)
        assert command.import_path(export)
        qt_wait_until(lambda: len(finished) == 2, 120, "the second import finishing")
        assert command.last_message == "Imported 400 conversations (12000 messages) from ChatGPT."
    finally:
        window.shutdown()


def test_an_import_that_ends_without_a_summary_says_how_it_ended(qtbot, store_path, starter_model, tmp_path, monkeypatch):
    """The child died before its summary (a crash, a kill): nothing is said to be imported, and its exit code and last
    words are given; the command takes the next file."""
    import sys

    from app.importing import command

    window = open_window(qtbot, store_path, starter_model, load=False)
    try:
        monkeypatch.setattr(command, "command", lambda _file, _store: [sys.executable, "-c", "import sys; print('not json'); sys.stderr.write('boom\\n'); sys.exit(3)"])
        importing = window.features["importing"]
        finished: list[object] = []
        importing.sig_finished.connect(finished.append)
        assert importing.import_path(DATA / "openwebui-chat-export.json")
        qt_wait_until(lambda: finished, 30, "the import ending")
        assert importing.last_message == "Nothing was imported: the import of openwebui-chat-export.json stopped (code 3): boom"
        assert window.chat.conversations.rowCount() == 0 and importing.action.isEnabled() and not importing.busy
    finally:
        window.shutdown()


def test_a_cancel_too_late_to_stop_the_import_says_what_was_imported(qtbot, store_path, starter_model):
    """Cancel once every conversation is written (only the import's last transaction left): it imports it all, so the
    window says so, and lists it, rather than "nothing was imported"."""
    window = open_window(qtbot, store_path, starter_model, load=False)
    try:
        command = window.features["importing"]
        finished: list[object] = []
        command.sig_finished.connect(finished.append)
        command.progress.bar.valueChanged.connect(lambda v: command.progress.cancel.click() if v == command.progress.bar.maximum() and v > 0 else None)
        assert command.import_path(DATA / "openwebui-chat-export.json")
        qt_wait_until(lambda: finished, 30, "the import ending")
        assert command._cancelled, "Cancel was clicked"
        assert command.last_message == "Imported 1 conversations (5 messages) from Open WebUI."
        assert window.chat.conversations.rowCount() == 1
    finally:
        window.shutdown()
