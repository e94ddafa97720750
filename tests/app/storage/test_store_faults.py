"""The conversation store under faults: nothing written before a fault is ever lost.

Each test writes a conversation through the real store, stages the fault for real (another
process holding the lock, a read-only or full tmpfs, damaged bytes, a newer schema), and checks
that every message written before it is still readable afterwards, and that no file was moved or
deleted unless SQLite proved it damaged.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from app.storage import store as st
from app.storage.store import SchemaTooNew, Store, StoreUnavailable, open_or_set_aside
from mounts import fill, remount, tmpfs
from store_lock import LockHolder

def write_conversation(path: Path, turns: int = 3) -> dict[int, str]:
    """A conversation of `turns` exchanges; returns message id -> content."""
    store = Store(path)
    conv = store.create_conversation("Before the fault")
    written = {}
    for i in range(turns):
        for role in ("user", "assistant"):
            msg = store.add_message(conv.id, role, f"{role} message {i} " + "x" * 200)
            written[msg.id] = msg.content
    store.close()
    return written


def readable(path: Path) -> dict[int, str]:
    """Every message in a database file, read with a connection of its own (no index, no Lokal code)."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return dict(db.execute("SELECT id, content FROM messages NOT INDEXED").fetchall())
    finally:
        db.close()


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def test_a_lock_held_longer_than_the_busy_timeout_moves_nothing_and_opens_once_released(tmp_path):
    path = tmp_path / "conversations.sqlite3"
    written = write_conversation(path)
    holder = LockHolder(path)
    try:
        before = files_of(tmp_path)
        with pytest.raises(StoreUnavailable) as caught:
            open_or_set_aside(path)
        assert caught.value.kind == "locked"
        assert "another program" in caught.value.message and "retry" in caught.value.message
        assert files_of(tmp_path).keys() == before.keys()  # nothing renamed, nothing deleted
        assert (tmp_path / "conversations.sqlite3").read_bytes() == before["conversations.sqlite3"]
    finally:
        holder.release()
    store, notice = open_or_set_aside(path)
    assert notice is None
    assert {m.id: m.content for m in store.messages(store.conversations()[0].id)} == written


def test_a_lock_taken_mid_reply_keeps_the_updates_until_it_is_released(tmp_path):
    path = tmp_path / "conversations.sqlite3"
    written = write_conversation(path)
    store = Store(path)
    conv = store.conversations()[0]
    reply = store.add_message(conv.id, "assistant", "", state=st.STREAMING)
    problems = []
    store.on_problem_changed(problems.append)
    holder = LockHolder(path)
    try:
        store.update_message(reply.id, content="a checkpoint while locked")
        store.update_message(reply.id, content="the whole reply", state=st.COMPLETE)
        assert store.deferred_writes == 1 and store.problem is not None and store.problem.kind == "locked"
        assert [p.kind for p in problems] == ["locked"]
        # The window reads its own updates meanwhile.
        assert store.messages(conv.id)[-1].content == "the whole reply"
        assert not store.retry_deferred()
    finally:
        holder.release()
    assert store.retry_deferred() and store.problem is None and problems[-1] is None
    store.close()
    on_disk = readable(path)
    assert {k: on_disk[k] for k in written} == written
    assert on_disk[reply.id] == "the whole reply"


def test_a_read_only_data_directory_moves_nothing_and_opens_once_writable(tmp_path):
    with tmpfs(tmp_path / "data", "8m") as data:
        path = data / "conversations.sqlite3"
        written = write_conversation(path)
        before = files_of(data)
        remount(data, read_only=True)
        try:
            with pytest.raises(StoreUnavailable) as caught:
                open_or_set_aside(path)
            assert caught.value.kind in ("readonly", "cannot_open")
            assert "writable" in caught.value.advice or "write" in caught.value.advice
            assert files_of(data) == before
        finally:
            remount(data, read_only=False)
        store, notice = open_or_set_aside(path)
        assert notice is None
        assert {m.id: m.content for m in store.messages(store.conversations()[0].id)} == written
        store.close()


def test_a_full_disk_keeps_a_reply_in_memory_and_writes_it_once_space_is_freed(tmp_path):
    with tmpfs(tmp_path / "data", "1m") as data:
        path = data / "conversations.sqlite3"
        written = write_conversation(path)
        store = Store(path)
        conv = store.conversations()[0]
        reply = store.add_message(conv.id, "assistant", "", state=st.STREAMING)
        filler = fill(data)
        long_text = "a reply that no longer fits " * 2000
        store.update_message(reply.id, content=long_text, state=st.COMPLETE)
        assert store.deferred_writes == 1 and store.problem.kind == "disk_full"
        assert "full" in store.problem.message and "Free some space" in store.problem.message
        with pytest.raises(StoreUnavailable) as caught:
            store.add_message(conv.id, "user", "a new question " * 2000)
        assert caught.value.kind == "disk_full"
        assert store.messages(conv.id)[-1].content == long_text
        filler.unlink()
        assert store.retry_deferred() and store.problem is None
        store.close()
        on_disk = readable(path)
        assert {k: on_disk[k] for k in written} == written and on_disk[reply.id] == long_text


def test_a_full_disk_at_start_moves_nothing(tmp_path):
    with tmpfs(tmp_path / "data", "1m") as data:
        path = data / "conversations.sqlite3"
        written = write_conversation(path)
        filler = fill(data)
        before = {name: content for name, content in files_of(data).items() if name != "filler"}
        try:
            store, _notice = open_or_set_aside(path)
        except StoreUnavailable as problem:
            assert problem.kind in ("disk_full", "io_error", "cannot_open")
        else:  # SQLite needed no new space to open it: then it must be the same database, whole
            assert {m.id: m.content for m in store.messages(store.conversations()[0].id)} == written
            store.close()
        after = files_of(data)
        # Nothing set aside or deleted (SQLite may have made its -wal and -shm, as it does for any WAL reader).
        assert before.keys() <= after.keys() and not [name for name in after if ".damaged-" in name]
        assert after["conversations.sqlite3"] == before["conversations.sqlite3"]
        filler.unlink()
        assert readable(path) == written


def crash_image(source: Path, target: Path) -> None:
    """The files as a crash leaves them: the database with its -wal and -shm, the newest commits only in the WAL."""
    for suffix in ("", "-wal", "-shm"):
        shutil.copyfile(str(source) + suffix, str(target) + suffix)


def test_a_file_that_is_not_a_database_is_set_aside_with_its_wal_and_shm(tmp_path):
    live = tmp_path / "live" / "conversations.sqlite3"
    live.parent.mkdir()
    written = write_conversation(live)
    store = Store(live)  # open: its last messages stay in the WAL
    conv = store.conversations()[0]
    newest = store.add_message(conv.id, "user", "only in the WAL")
    written[newest.id] = newest.content
    data = tmp_path / "data"
    data.mkdir()
    path = data / "conversations.sqlite3"
    crash_image(live, path)
    store.close()
    header = path.read_bytes()[:16]
    with open(path, "r+b") as f:
        f.write(b"not a database!!")  # the header: SQLite refuses the file ("file is not a database")
    before = files_of(data)

    store, notice = open_or_set_aside(path)
    assert notice is not None and "damaged" in notice
    aside = [name for name in files_of(data) if ".damaged-" in name]
    main_aside = next(name for name in aside if not name.endswith(("-wal", "-shm")))
    assert sorted(aside) == sorted([main_aside, main_aside + "-wal", main_aside + "-shm"])
    for suffix in ("", "-wal", "-shm"):
        assert (data / (main_aside + suffix)).read_bytes() == before["conversations.sqlite3" + suffix]
    assert main_aside in notice
    assert store.conversations() == []  # a new database
    store.close()
    # Everything is still in what was kept: with the header mended, every message reads back, the WAL's too.
    with open(data / main_aside, "r+b") as f:
        f.write(header)
    assert readable(data / main_aside) == written


def test_a_damaged_page_found_by_quick_check_sets_the_file_aside_and_every_message_stays_readable(tmp_path):
    path = tmp_path / "conversations.sqlite3"
    written = write_conversation(path, turns=20)
    db = sqlite3.connect(str(path))
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    (root,) = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'conversations_by_update'").fetchone()
    db.close()
    with open(path, "r+b") as f:  # the index's root page: damaged, while the messages' pages are whole
        f.seek((root - 1) * page_size)
        f.write(b"\xff" * 64)
    before = path.read_bytes()

    store, notice = open_or_set_aside(path)
    assert notice is not None and "quick_check" in notice
    (aside,) = [p for p in tmp_path.iterdir() if ".damaged-" in p.name and not p.name.endswith(("-wal", "-shm"))]
    assert aside.read_bytes() == before
    assert readable(aside) == written
    store.close()


def test_a_database_from_a_newer_lokal_is_left_exactly_as_it_was(tmp_path):
    path = tmp_path / "conversations.sqlite3"
    written = write_conversation(path)
    db = sqlite3.connect(str(path))
    db.execute(f"PRAGMA user_version = {st.SCHEMA_VERSION + 3}")
    db.close()
    before = files_of(tmp_path)
    with pytest.raises(SchemaTooNew) as caught:
        open_or_set_aside(path)
    assert (caught.value.found, caught.value.known) == (st.SCHEMA_VERSION + 3, st.SCHEMA_VERSION)
    assert files_of(tmp_path) == before
    assert readable(path) == written
