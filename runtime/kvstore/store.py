"""Saved sequence states: the newest in RAM (LRU, a budget in MB), all of them on disk (LRU, a budget in GB).

One state per conversation and settings (`key`): each turn's save replaces the
previous one, which it extends. A state is found by its token ids, not by its
conversation, so any saved state whose tokens begin the new prompt can serve
(two conversations with the same system prompt share that much).

Disk writes run on one background thread, so the turn that produced a state
never waits for the disk. Everything here is guarded by one lock; the engine
thread holds it only for dictionary work, never for I/O.
"""

from __future__ import annotations

import atexit
import logging
import os
import queue
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from runtime import disk_space
from runtime.kvstore import state_file
from runtime.kvstore.state_file import StateFileError

log = logging.getLogger("lokal.kvstore")

SUFFIX = ".kvs"
DEFAULT_RAM_BUDGET = 512 * 2**20
DEFAULT_DISK_BUDGET = 5 * 2**30
STALE_TEMP_SECONDS = 600
WRITE_OVERHEAD = 64 << 10  # a state file's header and prelude, generously: the floor check needs only an upper bound
ALIGNED_CANDIDATES = 4  # states compared as text with the prompt, not only by their ids


@dataclass
class Entry:
    key: str
    tag: dict
    tokens: np.ndarray  # int32, the exact token ids the state covers
    state_bytes: int
    path: Path
    last_used: float
    ram: np.ndarray | None = None  # the state itself, while it is held in RAM
    disk_bytes: int = 0  # bytes its file takes (the previous save's file until this one is written)
    written: bool = False  # this very state is on disk
    version: int = 0  # bumped by each save, so a late write of an older state is dropped
    prefill_ms_per_token: float = 0.0  # what prefilling cost when it was saved (0: not measured)


@dataclass
class Match:
    entry: Entry
    n_common: int  # leading tokens it shares with the prompt
    prompt: list[int]  # the prompt, spelled with the state's ids where they spell the same text


@dataclass
class Loaded:
    tokens: np.ndarray
    state: np.ndarray
    source: str  # "ram" or "disk"


@dataclass
class _Write:
    entry: Entry
    version: int
    state: np.ndarray
    epoch: int
    done: threading.Event = field(default_factory=threading.Event)


class KvStore:
    def __init__(self, directory: Path, ram_budget: int = DEFAULT_RAM_BUDGET, disk_budget: int = DEFAULT_DISK_BUDGET):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.ram_budget = ram_budget
        self.disk_budget = disk_budget
        self._lock = threading.Lock()
        self._entries: dict[str, Entry] = {}
        self._ram: OrderedDict[str, None] = OrderedDict()  # LRU order of entries whose state is in RAM
        self._ram_bytes = 0
        self._epoch = 0  # bumped by clear(): writes queued before it are dropped
        self._writes: queue.Queue[_Write | None] = queue.Queue()
        self._pending = 0
        self._idle = threading.Condition(self._lock)
        self._scan()
        self._writer = threading.Thread(target=self._write_loop, name="kvstore-writer", daemon=True)
        self._writer.start()
        # A runtime that exits normally (shutdown, stdin closed) finishes its writes first.
        atexit.register(self.flush, 30)

    # ---- index -------------------------------------------------------------
    def _scan(self) -> None:
        for path in self.directory.iterdir():
            if path.name.startswith(".") and path.name.endswith(".tmp"):
                try:
                    if time.time() - path.stat().st_mtime > STALE_TEMP_SECONDS:
                        path.unlink()  # a write that a crash interrupted (a recent one may be another runtime's, still writing)
                except OSError:
                    pass
                continue
            if path.suffix != SUFFIX:
                continue
            try:
                with open(path, "rb") as f:
                    stat = os.fstat(f.fileno())
                    header, tokens = state_file.read_index(f, stat.st_size)
            except (OSError, StateFileError) as exc:
                log.warning("discarding KV state %s: %s", path.name, exc)
                path.unlink(missing_ok=True)
                continue
            self._entries[header.key] = Entry(
                header.key, header.tag, tokens, header.state_bytes, path, stat.st_mtime, disk_bytes=stat.st_size, written=True,
                prefill_ms_per_token=header.prefill_ms_per_token,
            )

    def best_match(self, tag: dict, prompt: np.ndarray, align: Callable[[list[int]], list[int]] | None = None) -> Match | None:
        """The saved state, valid for `tag`, that shares the longest prefix with `prompt`.

        With `align` (tokens -> the prompt spelled with those ids where they spell the
        same text), the few states sharing the most ids are compared as text too.
        """
        with self._lock:
            candidates = [e for e in self._entries.values() if e.tag == tag]
        scored = sorted(((common_prefix(e.tokens, prompt), e) for e in candidates), key=lambda c: -c[0])
        best: Match | None = None
        for rank, (n, entry) in enumerate(scored):
            if n == 0:
                break
            ids = prompt.tolist()
            if align is not None and rank < ALIGNED_CANDIDATES:
                ids = align(entry.tokens.tolist())
                n = common_prefix(entry.tokens, np.asarray(ids, dtype=np.int32))
            if best is None or n > best.n_common:
                best = Match(entry, n, ids)
        return best

    # ---- save --------------------------------------------------------------
    def put(self, key: str, tag: dict, tokens: np.ndarray, state: np.ndarray, prefill_ms_per_token: float = 0.0) -> None:
        """Keep a state in RAM now and queue its write to disk."""
        with self._lock:
            old = self._entries.get(key)
            entry = Entry(
                key, tag, np.array(tokens, dtype=np.int32), int(state.size), self.directory / f"{key}{SUFFIX}", time.time(),
                version=(old.version + 1 if old else 0), prefill_ms_per_token=prefill_ms_per_token,
            )
            if old is not None:
                self._drop_ram(old)
                entry.disk_bytes = old.disk_bytes  # the old file stays until the new one replaces it
            self._entries[key] = entry
            self._hold_in_ram(entry, state)
            self._pending += 1
            self._writes.put(_Write(entry, entry.version, state, self._epoch))

    def _hold_in_ram(self, entry: Entry, state: np.ndarray) -> None:
        if state.size > self.ram_budget:
            return
        entry.ram = state
        self._ram[entry.key] = None
        self._ram_bytes += state.size
        while self._ram_bytes > self.ram_budget:
            oldest = next(iter(self._ram))
            self._drop_ram(self._entries[oldest])

    def _drop_ram(self, entry: Entry) -> None:
        if entry.ram is not None:
            self._ram_bytes -= entry.ram.size
            entry.ram = None
            self._ram.pop(entry.key, None)

    def _write_loop(self) -> None:
        # The writer hashes and writes tens of MB after every turn, while the next turn may already be
        # decoding on every core: at the lowest priority it takes only CPU time the decode leaves idle.
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        except (AttributeError, OSError):
            pass  # no per-thread priorities here (macOS, Windows): the write just competes
        while True:
            job = self._writes.get()
            if job is None:
                return
            try:
                self._write(job)
            except Exception:
                log.exception("writing KV state %s failed", job.entry.key)
            finally:
                with self._lock:
                    self._pending -= 1
                    self._idle.notify_all()
                job.done.set()

    def _write(self, job: _Write) -> None:
        entry = job.entry
        with self._lock:
            if not self._is_current(job):
                return
        if not self._make_room(job.state.nbytes + entry.tokens.nbytes + WRITE_OVERHEAD, entry):
            log.warning(
                "not saving KV state %s to disk: it would leave less than %.2f GiB free (kept in RAM only)",
                entry.key, disk_space.floor_bytes(self.directory) / 2**30,
            )
            return
        size = state_file.write(
            entry.path, entry.key, entry.tag, entry.tokens, job.state, entry.prefill_ms_per_token,
            publish=lambda tmp, path, size: self._publish(job, tmp, path, size),
        )
        if size:
            self._enforce_disk_budget()

    def _is_current(self, job: _Write) -> bool:
        """False once the store was cleared or a newer state of this conversation saved since (lock held)."""
        return job.epoch == self._epoch and self._entries.get(job.entry.key) is job.entry

    def _publish(self, job: _Write, tmp: Path, path: Path, size: int) -> bool:
        """Rename a written state into place, unless it was cleared or superseded while it was written.

        Under the lock, so the file a conversation has on disk changes only while clear() is not reading
        the folder: clear sees each file once, whole, and no write lands a cleared state after it."""
        with self._lock:
            if not self._is_current(job):
                return False
            os.replace(tmp, path)
            job.entry.disk_bytes = size
            job.entry.written = True
            return True

    def _enforce_disk_budget(self) -> None:
        with self._lock:
            on_disk = sorted((e for e in self._entries.values() if e.disk_bytes), key=lambda e: e.last_used)
            total = sum(e.disk_bytes for e in on_disk)
            evicted = []
            while total > self.disk_budget and on_disk:
                entry = on_disk.pop(0)
                total -= entry.disk_bytes
                evicted.append(self._evict_file(entry))
        for path in evicted:
            path.unlink(missing_ok=True)

    def _make_room(self, needed: int, keep: Entry) -> bool:
        """Keep the disk's free-space floor (runtime/disk_space.py, shared with downloads): evict the least
        recently used states on disk until `needed` bytes fit above it; False if even that is not enough."""
        room = disk_space.room_bytes(self.directory)
        if room >= needed:
            return True
        with self._lock:
            on_disk = sorted((e for e in self._entries.values() if e.disk_bytes and e is not keep), key=lambda e: e.last_used)
            evicted = []
            while room < needed and on_disk:
                entry = on_disk.pop(0)
                room += entry.disk_bytes
                evicted.append(self._evict_file(entry))
        for path in evicted:
            path.unlink(missing_ok=True)
        if evicted:
            log.info("evicted %d saved KV states to keep the disk's free-space floor", len(evicted))
        return room >= needed

    def _evict_file(self, entry: Entry) -> Path:
        """Forget that `entry` is on disk (lock held); returns the file to delete once the lock is released."""
        entry.disk_bytes = 0
        entry.written = False
        if entry.ram is None:
            del self._entries[entry.key]
        return entry.path

    # ---- restore -----------------------------------------------------------
    def load(self, entry: Entry) -> Loaded | None:
        """The entry's state from RAM, or from disk after every check; None (and the entry discarded) if it fails one."""
        with self._lock:
            entry.last_used = time.time()
            if entry.ram is not None:
                self._ram.move_to_end(entry.key)
                return Loaded(entry.tokens, entry.ram, "ram")
            if not entry.written:
                return None  # too big for RAM and not on disk yet: this turn prefills
        try:
            tokens, state = state_file.read_state(entry.path, entry.tag)
        except (OSError, StateFileError) as exc:
            log.warning("discarding KV state %s: %s", entry.path.name, exc)
            self.discard(entry)
            return None
        if not np.array_equal(tokens, entry.tokens):
            # Another runtime sharing this directory (the window and `lokal serve`, say) saved this
            # conversation since: its file is good, only this index is stale.
            with self._lock:
                if self._entries.get(entry.key) is entry:
                    del self._entries[entry.key]
            return None
        try:
            os.utime(entry.path)  # the disk LRU survives a restart through mtime
        except OSError:
            pass
        with self._lock:
            if self._entries.get(entry.key) is entry:
                self._hold_in_ram(entry, state)
        return Loaded(tokens, state, "disk")

    def discard(self, entry: Entry) -> None:
        with self._lock:
            if self._entries.get(entry.key) is entry:
                del self._entries[entry.key]
                self._drop_ram(entry)
        entry.path.unlink(missing_ok=True)

    # ---- size, clear, flush ------------------------------------------------
    def info(self) -> dict:
        with self._lock:
            return {
                "path": str(self.directory),
                "entries": len(self._entries),
                "disk_bytes": sum(e.disk_bytes for e in self._entries.values()),
                "disk_budget_bytes": self.disk_budget,
                "ram_bytes": self._ram_bytes,
                "ram_budget_bytes": self.ram_budget,
                "pending_writes": self._pending,
            }

    def clear(self) -> tuple[int, int]:
        """Forget every state, in RAM and on disk; returns (files removed, bytes freed).

        A write already under way when the epoch moves finishes without renaming its file into place: clear
        returns only after that, so no cleared state is on disk once it has answered."""
        removed = freed = 0
        with self._lock:
            self._epoch += 1
            self._entries.clear()
            self._ram.clear()
            self._ram_bytes = 0
            # Files are only renamed into place under this lock (_publish): none lands or goes while this reads.
            for path in self.directory.glob(f"*{SUFFIX}"):
                try:
                    size = path.stat().st_size
                    path.unlink()
                except OSError:
                    continue  # another runtime sharing the folder removed it first
                removed += 1
                freed += size
        self.flush(30)
        return removed, freed

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until queued writes are on disk; False if `timeout` ran out first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while self._pending:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._idle.wait(remaining)
        return True


def common_prefix(a: np.ndarray, b: np.ndarray) -> int:
    n = min(a.size, b.size)
    differ = np.flatnonzero(a[:n] != b[:n])
    return int(differ[0]) if differ.size else n
