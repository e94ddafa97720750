"""`lokal import FILE`: conversations from an export into the database, from the command line (the window runs it too)."""

import json
import subprocess
import sys
from pathlib import Path

from app.storage import store as st
from app.storage.store import Store

DATA = Path(__file__).parents[1] / "importing" / "data"


def lokal_import(*args: str, stdin: int | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app", "import", *args], capture_output=True, text=True, timeout=120, stdin=stdin)


def test_an_export_is_imported_and_summed_up(tmp_path):
    db = tmp_path / "conversations.sqlite3"
    done = lokal_import(str(DATA / "openwebui-chat-export.json"), "--store", str(db), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    store = Store(db)
    try:
        (conv,) = store.conversations()
        assert summary == {"format": "Open WebUI", "added": 1, "first_added": conv.id, "skipped": 0, "messages": 5, "attachments_not_found": 0}
        assert conv.title == "Sourdough starter"
    finally:
        store.close()
    again = lokal_import(str(DATA / "openwebui-chat-export.json"), "--store", str(db))
    assert again.returncode == 0 and "imported 0 conversations" in again.stdout and "1 imported before and skipped" in again.stdout


def test_a_bad_file_imports_nothing_and_says_why(tmp_path):
    db = tmp_path / "conversations.sqlite3"
    bad = tmp_path / "bad.json"
    bad.write_text('{"messages": "no"}')
    done = lokal_import(str(bad), "--store", str(db), "--json")
    assert done.returncode == 1
    assert "error" in json.loads(done.stdout) and "bad.json" in json.loads(done.stdout)["error"]
    text = lokal_import(str(tmp_path / "missing.json"), "--store", str(db))
    assert text.returncode == 1 and "nothing was imported" in text.stderr and "missing.json" in text.stderr
    store = Store(db)
    try:
        assert store.conversations() == []
    finally:
        store.close()


def test_a_database_that_cannot_be_opened_is_said(tmp_path):
    folder = tmp_path / "a folder"
    folder.mkdir()
    done = lokal_import(str(DATA / "openwebui-chat-export.json"), "--store", str(folder), "--json")
    assert done.returncode == 1 and json.loads(done.stdout)["error"].startswith("cannot open the conversations database")


def test_a_reply_the_window_is_streaming_is_left_streaming(tmp_path):
    """The import opens the database beside a window that may be writing a reply: it must not mark that reply
    interrupted, as a window's own start does with one a crash left streaming."""
    db = tmp_path / "conversations.sqlite3"
    store = Store(db)
    try:
        conv = store.create_conversation("open in the window")
        store.add_message(conv.id, "user", "q")
        reply = store.add_message(conv.id, "assistant", "half a rep", state=st.STREAMING)
        done = lokal_import(str(DATA / "openwebui-chat-export.json"), "--store", str(db), "--json")
        assert done.returncode == 0, done.stderr
        assert store.message(reply.id).state == st.STREAMING
        assert len(store.conversations()) == 2
    finally:
        store.close()


def test_progress_lines_come_before_the_summary(tmp_path):
    from chatgpt_exports import write_chatgpt_export

    export = write_chatgpt_export(tmp_path / "conversations.json", 5, 4)
    done = lokal_import(str(export), "--store", str(tmp_path / "c.sqlite3"), "--json", "--progress")
    assert done.returncode == 0, done.stderr
    *progress, summary = [json.loads(line) for line in done.stdout.splitlines()]
    counts = [(p["progress"]["done"], p["progress"]["total"]) for p in progress]
    assert counts[0] == (0, 5) and counts[-1] == (5, 5) and counts == sorted(counts)
    assert summary["added"] == 5 and summary["messages"] == 20


def test_standard_input_closing_stops_an_import_that_was_asked_to_watch_it(tmp_path):
    """`--stop-when-stdin-closes` (the window's Cancel closes it): stopped, and nothing of the file kept."""
    db = tmp_path / "c.sqlite3"
    done = lokal_import(str(DATA / "openwebui-chat-export.json"), "--store", str(db), "--json", "--stop-when-stdin-closes", stdin=subprocess.DEVNULL)
    assert done.returncode == 1 and json.loads(done.stdout) == {"error": "stopped: nothing of the file was kept"}
    store = Store(db)
    try:
        assert store.conversations() == []
    finally:
        store.close()
    kept_open = lokal_import(str(DATA / "openwebui-chat-export.json"), "--store", str(db), "--json", stdin=subprocess.DEVNULL)
    assert kept_open.returncode == 0 and json.loads(kept_open.stdout)["added"] == 1, "without the option, its input is not read"
