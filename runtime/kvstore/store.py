"""Saved sequence states: the newest in RAM (LRU, a budget in MB), all of them on disk (LRU, a budget in GB).

One chain of parts per conversation and settings (`key`): part 0 a whole state,
each later part only what a turn added (the KV cells from where the turn's tokens
part from the saved ones to the end), so a turn writes about its own tokens' KV,
not the whole conversation's (issue #28: 52 MB per turn at 1.8k tokens before).
A turn that shares less than half of the saved tokens starts a new chain with a
whole state. When a chain passes MAX_PARTS parts, the writer packs it into one
part 0 (dropping segments that later ones replaced): it copies bytes already
saved, so the engine thread does nothing for it. A state is found by its token
ids, not by its conversation, so any saved state whose tokens begin the new
prompt can serve (two conversations with the same system prompt share that much).

Each part is its own file, written to a temporary name and renamed into place,
in chain order, by one background thread: a crash leaves a chain that ends at
its last whole part, which is a valid (shorter) state. A part that does not
follow its predecessor (another chain's, or one whose predecessor is gone) is
deleted when the folder is scanned, never applied.

Disk writes run on one background thread, so the turn that produced a state
never waits for the disk. Everything here is guarded by one lock; the engine
thread holds it only for dictionary work, never for I/O.
"""

from __future__ import annotations

import atexit
import itertools
import logging
import os
import queue
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from runtime import disk_space
from runtime.kvstore import state_file
from runtime.kvstore.state_file import Segment, SegmentInfo, StateFileError

log = logging.getLogger("lokal.kvstore")

SUFFIX = ".kvs"
DEFAULT_RAM_BUDGET = 512 * 2**20
DEFAULT_DISK_BUDGET = 5 * 2**30
STALE_TEMP_SECONDS = 600
WRITE_OVERHEAD = 64 << 10  # a state file's header and prelude, generously: the floor check needs only an upper bound
ALIGNED_CANDIDATES = 4  # states compared as text with the prompt, not only by their ids
# Single parts a chain may have before the writer packs them into one file (see append). A restore costs
# about 1 ms more per file (a read, a checksum, a llama_state_seq_set_data).
MAX_PARTS = 16


@dataclass
class Part:
    """One file of a chain: parts `first`..`last` (several once packed), as segments."""

    first: int
    last: int
    segments: list[SegmentInfo]
    path: Path
    disk_bytes: int = 0  # what its file takes, once written
    written: bool = False

    @property
    def state_bytes(self) -> int:
        return sum(s.state_bytes for s in self.segments)


@dataclass
class Entry:
    key: str
    tag: dict[str, Any]
    tokens: np.ndarray  # int32, the exact token ids the whole chain covers
    chain: str
    parts: list[Part]
    last_used: float
    ram: list[Segment] | None = None  # every segment of the chain, while the chain is held in RAM
    replaced_disk_bytes: int = 0  # files of the chain this one replaced, until its part 0 replaces them
    prefill_ms_per_token: float = 0.0  # what prefilling cost when it was saved (0: not measured)

    @property
    def state_bytes(self) -> int:
        return sum(p.state_bytes for p in self.parts)

    @property
    def disk_bytes(self) -> int:
        return sum(p.disk_bytes for p in self.parts) + self.replaced_disk_bytes

    @property
    def written(self) -> bool:
        return all(p.written for p in self.parts)

    @property
    def n_segment_tokens(self) -> int:
        return sum(s.n_tokens for p in self.parts for s in p.segments)


@dataclass
class Match:
    entry: Entry
    n_common: int  # leading tokens it shares with the prompt
    prompt: list[int]  # the prompt, spelled with the state's ids where they spell the same text


@dataclass
class Loaded:
    tokens: np.ndarray
    segments: list[Segment]  # applied in order: each cuts the cache back to its start, then appends its cells
    source: str  # "ram" or "disk"


# A file found in the folder: its header, token ids, path and stat.
_Indexed = tuple[state_file.StateHeader, np.ndarray, Path, os.stat_result]


@dataclass
class _Write:
    entry: Entry
    part: Part
    segments: list[Segment]
    epoch: int
    pack: bool = False  # written together with the single parts before it, as one file (see append)


@dataclass
class _Pack:
    entry: Entry
    epoch: int


def apply_segments(segments: Sequence[SegmentInfo | Segment]) -> int | None:
    """The token count a chain's segments leave (each cuts back to its start, then appends); None if one starts past the end."""
    n = 0
    for s in segments:
        if s.start > n:
            return None
        n = s.start + (s.n_tokens if isinstance(s, SegmentInfo) else s.tokens.size)
    return n


def chain_tokens(segments: list[Segment]) -> np.ndarray:
    """The token ids a chain's segments leave (segments already checked to follow each other)."""
    out = np.empty(0, dtype=np.int32)
    for s in segments:
        out = np.concatenate([out[: s.start], np.asarray(s.tokens, dtype=np.int32)])
    return out


def live_segments(segments: list[Segment]) -> list[Segment]:
    """The segments a restore still needs: one whose cells a later one cuts away entirely is left out."""
    kept: list[Segment] = []
    for i, s in enumerate(segments):
        if any(later.start <= s.start for later in segments[i + 1 :]):
            continue
        kept.append(s)
    return kept


def part_path(directory: Path, key: str, first: int) -> Path:
    return directory / (f"{key}{SUFFIX}" if first == 0 else f"{key}.{first}{SUFFIX}")


class StateStore:
    def __init__(self, directory: Path, ram_budget: int = DEFAULT_RAM_BUDGET, disk_budget: int = DEFAULT_DISK_BUDGET, max_parts: int = MAX_PARTS):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.ram_budget = ram_budget
        self.disk_budget = disk_budget
        self.max_parts = max_parts
        self._lock = threading.Lock()
        self._entries: dict[str, Entry] = {}
        self._ram: OrderedDict[str, None] = OrderedDict()  # LRU order of entries whose chain is in RAM
        self._ram_bytes = 0
        self._epoch = 0  # bumped by clear(): writes queued before it are dropped
        self._writes: queue.Queue[_Write | _Pack | None] = queue.Queue()
        self._pending = 0
        self._idle = threading.Condition(self._lock)
        self._scan()
        self._writer = threading.Thread(target=self._write_loop, name="kvstore-writer", daemon=True)
        self._writer.start()
        # A runtime that exits normally (shutdown, stdin closed) finishes its writes first.
        atexit.register(self.flush, 30)

    # ---- index -------------------------------------------------------------
    def _scan(self) -> None:
        found: dict[str, list[_Indexed]] = {}
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
                if path != part_path(self.directory, header.key, header.first):
                    raise StateFileError(f"part {header.first} of {header.key} under another name")
            except (OSError, StateFileError) as exc:
                log.warning("discarding KV state %s: %s", path.name, exc)
                path.unlink(missing_ok=True)
                continue
            found.setdefault(header.key, []).append((header, tokens, path, stat))
        for key, files in found.items():
            entry, leftovers = self._chain_from(key, files)
            for path in leftovers:
                log.warning("discarding KV state %s: not part of its conversation's chain", path.name)
                path.unlink(missing_ok=True)
            if entry is not None:
                self._entries[key] = entry

    def _chain_from(self, key: str, files: list[_Indexed]) -> tuple[Entry | None, list[Path]]:
        """The chain that part 0 starts and each next part continues (same chain, the next part number, segments that follow)."""
        by_first = {header.first: (header, tokens, path, stat) for header, tokens, path, stat in files}
        if 0 not in by_first:
            return None, [path for _h, _t, path, _s in files]
        base = by_first[0][0]
        entry = Entry(key, base.tag, np.empty(0, dtype=np.int32), base.chain, [], 0.0, prefill_ms_per_token=base.prefill_ms_per_token)
        used = set()
        nxt = 0
        segments: list[Segment] = []
        while nxt in by_first:
            header, tokens, path, stat = by_first[nxt]
            if header.chain != entry.chain or header.tag != entry.tag:
                break
            t = 0
            mine = []
            for info in header.segments:
                mine.append(Segment(info.start, tokens[t : t + info.n_tokens], np.empty(0, dtype=np.uint8)))
                t += info.n_tokens
            if apply_segments(segments + mine) is None:
                break
            segments += mine
            entry.parts.append(Part(header.first, header.last, header.segments, path, stat.st_size, written=True))
            entry.last_used = max(entry.last_used, stat.st_mtime)
            used.add(path)
            nxt = header.last + 1
        entry.tokens = chain_tokens(segments)
        return entry, [path for _h, _t, path, _s in files if path not in used]

    def best_match(self, tag: dict[str, Any], prompt: np.ndarray, align: Callable[[list[int]], list[int]] | None = None) -> Match | None:
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
    def append_start(self, key: str, tag: dict[str, Any], tokens: np.ndarray) -> int | None:
        """Where a part holding only what `tokens` adds to the saved chain of `key` would start; None when
        a whole state should be saved instead (no chain, other settings, or less than half of it shared)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry.tag != tag or not entry.parts:
                return None
            start = common_prefix(entry.tokens, tokens)
        # Half or more replaced (an edit early in the conversation): the chain would be mostly cells cut away.
        return start if start * 2 >= tokens.size and start > 0 else None

    def put(self, key: str, tag: dict[str, Any], tokens: np.ndarray, state: np.ndarray, prefill_ms_per_token: float = 0.0) -> None:
        """A whole state: a new chain of one part, kept in RAM now, its write queued."""
        tokens = np.array(tokens, dtype=np.int32)
        segment = Segment(0, tokens, state)
        with self._lock:
            old = self._entries.get(key)
            part = Part(0, 0, [SegmentInfo(0, int(tokens.size), int(state.size))], part_path(self.directory, key, 0))
            entry = Entry(key, tag, tokens, state_file.new_chain_id(), [part], time.time(), prefill_ms_per_token=prefill_ms_per_token)
            if old is not None:
                self._drop_ram(old)
                entry.replaced_disk_bytes = old.disk_bytes  # the old files stay until the new part 0 replaces them
            self._entries[key] = entry
            self._hold_in_ram(entry, [segment])
            self._queue(_Write(entry, part, [segment], self._epoch))

    def append(self, key: str, tag: dict[str, Any], start: int, tokens: np.ndarray, state: np.ndarray, prefill_ms_per_token: float = 0.0) -> bool:
        """Add a part holding the cells of tokens[start:] to the chain of `key`; False (nothing done) if that chain
        is gone or no longer shares tokens[:start] (cleared, evicted), so the caller saves a whole state."""
        tokens = np.asarray(tokens, dtype=np.int32)
        segment = Segment(start, np.array(tokens[start:]), state)
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry.tag != tag or not entry.parts or common_prefix(entry.tokens, tokens) < start:
                return False
            n = entry.parts[-1].last + 1
            part = Part(n, n, [SegmentInfo(start, int(segment.tokens.size), int(state.size))], part_path(self.directory, key, n))
            entry.parts.append(part)
            entry.tokens = np.array(tokens, dtype=np.int32)
            entry.last_used = time.time()
            if prefill_ms_per_token:
                entry.prefill_ms_per_token = prefill_ms_per_token
            if entry.ram is not None:
                self._ram_bytes += state.size
                entry.ram.append(segment)
                self._ram.move_to_end(key)
                self._fit_ram()
            # Every max_parts-th part is written together with the single parts before it, as one file, instead of
            # alone: each byte is written once more, so a turn writes (2 - 1/max_parts) x its KV over time, and a
            # chain has at most max_parts single parts. Should packs pile up too (a context of 100k tokens), the
            # whole chain is packed into one file (MAX_PARTS^2 turns apart).
            singles = list(itertools.takewhile(lambda p: p.first == p.last and p.first > 0, reversed(entry.parts[:-1])))
            self._queue(_Write(entry, part, [segment], self._epoch, pack=len(singles) + 1 >= self.max_parts))
            if len(entry.parts) > 2 * self.max_parts:
                self._queue(_Pack(entry, self._epoch))
        return True

    def _queue(self, job: _Write | _Pack) -> None:
        """(lock held)"""
        self._pending += 1
        self._writes.put(job)

    def _hold_in_ram(self, entry: Entry, segments: list[Segment]) -> None:
        size = sum(s.state.size for s in segments)
        if size > self.ram_budget:
            return
        entry.ram = list(segments)
        self._ram[entry.key] = None
        self._ram_bytes += size
        self._fit_ram()

    def _fit_ram(self) -> None:
        while self._ram_bytes > self.ram_budget:
            oldest = next(iter(self._ram))
            self._drop_ram(self._entries[oldest])

    def _drop_ram(self, entry: Entry) -> None:
        if entry.ram is not None:
            self._ram_bytes -= sum(s.state.size for s in entry.ram)
            entry.ram = None
            self._ram.pop(entry.key, None)

    def _write_loop(self) -> None:
        # The writer hashes and writes after every turn, while the next turn may already be decoding on
        # every core: at the lowest priority it takes only CPU time the decode leaves idle.
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        except (AttributeError, OSError):
            pass  # no per-thread priorities here (macOS, Windows): the write just competes
        while True:
            job = self._writes.get()
            if job is None:
                return
            try:
                if isinstance(job, _Pack):
                    self._pack(job)
                else:
                    self._write(job)
            except Exception:
                log.exception("writing KV state %s failed", job.entry.key)
            finally:
                with self._lock:
                    self._pending -= 1
                    self._idle.notify_all()

    def _write(self, job: _Write) -> None:
        entry, part = job.entry, job.part
        with self._lock:
            if not self._is_current(job.epoch, entry) or part not in entry.parts:
                return
            at = entry.parts.index(part)
            # A part is of use on disk only after the parts before it (written in order, by this thread).
            follows = all(p.written for p in entry.parts[:at])
            group = list(itertools.takewhile(lambda p: p.first == p.last and p.first > 0, reversed(entry.parts[:at])))[::-1] if job.pack else []
            offset = sum(len(p.segments) for p in entry.parts[: at - len(group)])
            held = entry.ram[offset : offset + sum(len(p.segments) for p in group)] if entry.ram is not None and group else None
        if not follows:
            return
        segments, replaced, written = job.segments, [part], part
        if group:
            before = held if held is not None else self._read_chain(entry, group)
            if before is not None:
                segments = live_segments(before + job.segments)
                replaced = group + [part]
                written = Part(group[0].first, part.last, [SegmentInfo(s.start, int(s.tokens.size), int(s.state.size)) for s in segments], group[0].path)
        if not self._make_room(written.state_bytes + 4 * sum(s.n_tokens for s in written.segments) + WRITE_OVERHEAD, entry):
            log.warning(
                "not saving KV state %s to disk: it would leave less than %.2f GiB free (kept in RAM only)",
                entry.key, disk_space.floor_bytes(self.directory) / 2**30,
            )
            if part.first == 0:
                self._remove_replaced(entry)
            return
        size = state_file.write_part(
            written.path, entry.key, entry.tag, segments, entry.chain, written.first, written.last, entry.prefill_ms_per_token,
            publish=lambda tmp, path, size, _checksum: self._publish(job.epoch, entry, replaced, written, tmp, path, size, segments),
        )
        if size:
            self._enforce_disk_budget()

    def _pack(self, job: _Pack) -> None:
        """Rewrite the chain's leading written parts as one part 0, leaving out segments later ones cut away entirely."""
        entry = job.entry
        with self._lock:
            if not self._is_current(job.epoch, entry):
                return
            parts = list(itertools.takewhile(lambda p: p.written, entry.parts))
            n_segments = sum(len(p.segments) for p in parts)
            segments = list(entry.ram[:n_segments]) if entry.ram is not None else None
        if len(parts) < 2:
            return
        if segments is None:
            segments = self._read_chain(entry, parts)
            if segments is None:
                return
        segments = live_segments(segments)
        packed = Part(0, parts[-1].last, [SegmentInfo(s.start, int(s.tokens.size), int(s.state.size)) for s in segments], part_path(self.directory, entry.key, 0))
        if not self._make_room(packed.state_bytes + 4 * sum(s.tokens.size for s in segments) + WRITE_OVERHEAD, entry):
            return  # the chain stays as it is: longer to restore, still whole
        state_file.write_part(
            packed.path, entry.key, entry.tag, segments, entry.chain, 0, packed.last, entry.prefill_ms_per_token,
            publish=lambda tmp, path, size, _checksum: self._publish(job.epoch, entry, parts, packed, tmp, path, size, segments),
        )

    def _is_current(self, epoch: int, entry: Entry) -> bool:
        """False once the store was cleared or a new chain of this conversation saved since (lock held)."""
        return epoch == self._epoch and self._entries.get(entry.key) is entry

    def _publish(self, epoch: int, entry: Entry, replaced: list[Part], part: Part, tmp: Path, path: Path, size: int, segments: list[Segment]) -> bool:
        """Rename a written part into place, unless it was cleared or superseded while it was written; the
        parts in `replaced` give way to it (several: a pack, whose `segments` RAM then holds too). A new
        part 0 makes every other file of the key stale.

        Under the lock, so the files a conversation has on disk change only while clear() is not reading
        the folder: clear sees each file once, whole, and no write lands a cleared state after it."""
        with self._lock:
            if not self._is_current(epoch, entry) or any(p not in entry.parts for p in replaced):
                return False
            os.replace(tmp, path)
            part.disk_bytes = size
            part.written = True
            at = entry.parts.index(replaced[0])
            if entry.ram is not None and len(replaced) > 1:
                # RAM keeps the segments the disk keeps, so that a later pack reads them from there.
                offset = sum(len(p.segments) for p in entry.parts[:at])
                n = sum(len(p.segments) for p in replaced)
                self._ram_bytes += sum(s.state.size for s in segments) - sum(s.state.size for s in entry.ram[offset : offset + n])
                entry.ram[offset : offset + n] = segments
            entry.parts[at : at + len(replaced)] = [part]
            gone = [p.path for p in replaced if p.written and p.path != path]
            if part.first == 0:
                gone = [p for p in self.directory.glob(f"{entry.key}.*{SUFFIX}") if p not in {q.path for q in entry.parts}]
                entry.replaced_disk_bytes = 0
            for old in gone:
                old.unlink(missing_ok=True)
            return True

    def _remove_replaced(self, entry: Entry) -> None:
        """The files of the chain a new one replaced, when the new one's part 0 could not be written."""
        with self._lock:
            if self._entries.get(entry.key) is not entry or entry.replaced_disk_bytes == 0:
                return
            entry.replaced_disk_bytes = 0
            paths = [part_path(self.directory, entry.key, 0), *self.directory.glob(f"{entry.key}.*{SUFFIX}")]
            for path in paths:
                path.unlink(missing_ok=True)

    def _enforce_disk_budget(self) -> None:
        with self._lock:
            on_disk = sorted((e for e in self._entries.values() if e.disk_bytes), key=lambda e: e.last_used)
            total = sum(e.disk_bytes for e in on_disk)
            evicted = []
            while total > self.disk_budget and on_disk:
                entry = on_disk.pop(0)
                total -= entry.disk_bytes
                evicted += self._evict_files(entry)
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
                evicted += self._evict_files(entry)
        for path in evicted:
            path.unlink(missing_ok=True)
        if evicted:
            log.info("evicted %d saved KV states to keep the disk's free-space floor", len(evicted))
        return room >= needed

    def _evict_files(self, entry: Entry) -> list[Path]:
        """Forget that `entry` is on disk (lock held); returns the files to delete once the lock is released."""
        paths = [p.path for p in entry.parts if p.written]
        if entry.replaced_disk_bytes:
            paths += [part_path(self.directory, entry.key, 0), *self.directory.glob(f"{entry.key}.*{SUFFIX}")]
        for p in entry.parts:
            p.disk_bytes, p.written = 0, False
        entry.replaced_disk_bytes = 0
        if entry.ram is None:
            del self._entries[entry.key]
        return paths

    # ---- restore -----------------------------------------------------------
    def holds(self, key: str, tokens: Sequence[int]) -> bool:
        """Whether `load` would give back exactly `tokens` under `key` now: the chain is in RAM or all on disk."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or not (entry.ram is not None or entry.written):
                return False
            return entry.tokens.size == len(tokens) and bool(np.array_equal(entry.tokens, np.asarray(tokens, dtype=np.int32)))

    def load(self, entry: Entry) -> Loaded | None:
        """The entry's chain from RAM, or from disk after every check; None (and the entry discarded) if it fails one."""
        with self._lock:
            entry.last_used = time.time()
            if entry.ram is not None:
                self._ram.move_to_end(entry.key)
                return Loaded(entry.tokens, list(entry.ram), "ram")
            if not entry.written:
                return None  # not in RAM and not all on disk yet: this turn prefills
            parts = list(entry.parts)
        segments = self._read_chain(entry, parts)
        if segments is None:
            return None
        if not np.array_equal(chain_tokens(segments), entry.tokens):
            self._forget(entry)  # as above: another runtime's chain under the same names
            return None
        for part in parts:
            try:
                os.utime(part.path)  # the disk LRU survives a restart through mtime
            except OSError:
                pass
        with self._lock:
            if self._entries.get(entry.key) is entry and len(entry.parts) == len(parts) and all(a is b for a, b in zip(entry.parts, parts)):
                self._hold_in_ram(entry, segments)
        return Loaded(chain_tokens(segments), segments, "disk")

    def _read_chain(self, entry: Entry, parts: list[Part]) -> list[Segment] | None:
        """The segments of `parts` from their files, each checked, and checked to be this chain; None if not."""
        segments: list[Segment] = []
        for part in parts:
            try:
                header, mine = state_file.read_state(part.path, entry.tag)
            except (OSError, StateFileError) as exc:
                log.warning("discarding KV state %s: %s", part.path.name, exc)
                self.discard(entry)
                return None
            if (header.chain, header.first, header.last, header.segments) != (entry.chain, part.first, part.last, part.segments):
                # Another runtime sharing this directory (the window and `lokal serve`, say) saved this
                # conversation since: its files are good, only this index is stale.
                self._forget(entry)
                return None
            segments += mine
        if apply_segments(segments) is None:
            self._forget(entry)
            return None
        return segments

    def _forget(self, entry: Entry) -> None:
        with self._lock:
            if self._entries.get(entry.key) is entry:
                del self._entries[entry.key]
                self._drop_ram(entry)

    def discard(self, entry: Entry) -> None:
        with self._lock:
            if self._entries.get(entry.key) is not entry:
                return
            del self._entries[entry.key]
            self._drop_ram(entry)
            paths = [p.path for p in entry.parts]
        for path in paths:
            path.unlink(missing_ok=True)

    # ---- size, clear, flush ------------------------------------------------
    def info(self) -> dict[str, Any]:
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
