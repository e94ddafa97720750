"""Downloads from the hub into the Hugging Face cache layout, with our own ranged requests.

huggingface_hub (>= 1.18) no longer resumes across calls and deletes its
partial file on failure, so the bytes are fetched here, with its URL, auth
and error helpers:

- the cache layout is the hub's own (models--org--name/blobs/<sha256>,
  snapshots/<commit>/<file> -> ../../blobs/<sha256>, refs/<revision>), so
  other Hugging Face tools see the files, and Lokal sees theirs;
- a file grows as blobs/<sha256>.incomplete; every request asks for the bytes
  after what is on disk, so a dropped connection, a pause, or a restart of the
  runtime all resume where they stopped (each download's plan is saved as JSON
  in Lokal's data directory, and the URL names the commit, not a branch, so
  the bytes on disk and the bytes asked for are the same file);
- transient failures (connection drops, timeouts, 5xx, 429) are retried with
  exponential back-off; a retry that made progress resets the count;
- the sha256 is computed while the bytes arrive (re-read from disk once after a
  resume), and the blob gets its final name only once it matches: a mismatch
  deletes the file and says so;
- each download runs on its own thread, never in the engine's job slot. Pause
  and cancel shut the socket down, so they take effect at once even while the
  server is stalled;
- one writer per blob, across processes: `lokal pull` runs its own runtime over
  the same cache as the window, so each blob is fetched under a file lock in
  `<cache>/.locks/models--org--name/<blob>.lock` (where huggingface_hub takes
  its own, so it and Lokal never write one `.incomplete` file together). A
  download that finds the lock taken says it is "waiting", and once it gets the
  lock finds the blob done, or resumes what the other left;
- where the file system refuses symlinks (Windows without developer mode or
  admin rights), the verified blob is moved to its snapshot path, not copied:
  the model takes its size once, as the disk check assumed, and `lokal rm`
  frees it. A "done" download whose files are gone is forgotten, so it can be
  pulled again.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Callable, get_args

import httpx2
from filelock import FileLock, Timeout

from runtime import disk_space
from runtime.hub import hf
from runtime.hub import names
from runtime.hub.cache_folder import cache_dir as hub_cache_dir, repo_folder
from runtime.hub.errors import TransientError, disk_full, from_exception
from runtime.hub.quants import find_level, incomplete_split, pick_projector
from runtime.hub.repo import list_repo
from runtime.hub.speed import SpeedMeter, eta_seconds
from runtime.protocol import DownloadInfo, DownloadStartParams, DownloadState, ErrorCode, RpcError

log = logging.getLogger("lokal.hub.downloads")

CHUNK = 1 << 20
PROGRESS_INTERVAL_S = 0.25
MAX_RETRIES = 6
BACKOFF_S = 0.5
MAX_BACKOFF_S = 30.0
TIMEOUT = httpx2.Timeout(30.0, connect=10.0)
# While a file arrives, the floor of free space (runtime/disk_space.py) is checked again after this many bytes:
# something else may be filling the disk meanwhile.
FLOOR_CHECK_BYTES = 16 << 20
ACTIVE: tuple[DownloadState, ...] = ("queued", "waiting", "running", "verifying")
STATES: tuple[DownloadState, ...] = get_args(DownloadState)
# A file lock has no portable "released" notification: a waiting download tries again this often (a pause
# or cancel wakes it at once).
LOCK_RETRY_S = 0.25


class _Stopped(Exception):
    """Pause or cancel was asked for."""


@dataclass
class PlannedFile:
    name: str
    size: int
    sha256: str | None
    done: bool = False


def _catalog_projector(repo: str) -> str | None:
    """The projector file the curated catalog names for `repo` (None: not in the catalog, or not a vision model)."""
    from runtime.hub import catalog

    entry = catalog.read().entry(repo)
    return entry.mmproj if entry else None


def blob_name(f: PlannedFile) -> str:
    # The hub's ETag for an LFS file is its sha256, and huggingface_hub names blobs by ETag.
    return f.sha256 or hashlib.sha256(f"{f.name}\0{f.size}".encode()).hexdigest()




class Download:
    def __init__(self, manager: "DownloadManager", record: dict):
        self.manager = manager
        self.id: str = record["id"]
        self.repo: str = record["repo"]
        self.revision: str = record["revision"]
        self.commit: str = record["commit"]
        self.quant: str = record.get("quant", "")
        self.files = [PlannedFile(**f) for f in record["files"]]
        _check_names(self.repo, self.revision, self.commit, self.files)  # a saved record is read back through the same check
        self.state: DownloadState = next((s for s in STATES if s == record.get("state")), "paused")  # an unknown one (a damaged record) resumes paused
        self.error: str | None = record.get("error")
        self.error_code: int | None = record.get("error_code")
        self.error_data: dict | None = record.get("error_data") if isinstance(record.get("error_data"), dict) else None
        self.paths: list[str] = record.get("paths", [])
        self.current_file = ""
        self.attempts = 0
        self.bytes_done = self._bytes_on_disk()
        self.meter = SpeedMeter()
        self._lock = threading.Lock()
        self._request: str | None = None  # "pause" | "cancel"
        self._wake = threading.Event()
        self._socket: socket.socket | None = None
        self.thread: threading.Thread | None = None

    # ---- places -------------------------------------------------------------
    @property
    def folder(self) -> Path:
        return repo_folder(self.manager.cache_dir, self.repo)

    def blob(self, f: PlannedFile) -> Path:
        return names.inside(self.folder, self.folder / "blobs" / blob_name(f))

    def partial(self, f: PlannedFile) -> Path:
        return names.inside(self.folder, self.folder / "blobs" / (blob_name(f) + ".incomplete"))

    def snapshot_path(self, f: PlannedFile) -> Path:
        return names.inside(self.folder, self.folder / "snapshots" / self.commit / f.name)

    def lock_path(self, f: PlannedFile) -> Path:
        locks = self.manager.cache_dir / ".locks" / self.folder.name
        return names.inside(locks, locks / (blob_name(f) + ".lock"))

    def _bytes_on_disk(self) -> int:
        total = 0
        for f in self.files:
            if f.done or self._in_cache(f):
                total += f.size
            elif self.partial(f).exists():
                total += min(self.partial(f).stat().st_size, f.size)
        return total

    @property
    def bytes_total(self) -> int:
        return sum(f.size for f in self.files)

    def record(self) -> dict:
        return {
            "id": self.id, "repo": self.repo, "revision": self.revision, "commit": self.commit, "quant": self.quant,
            "files": [f.__dict__ for f in self.files], "state": self.state, "error": self.error,
            "error_code": self.error_code, "error_data": self.error_data, "paths": self.paths,
        }

    def info(self) -> DownloadInfo:
        speed = self.meter.speed() if self.state == "running" else 0.0
        return DownloadInfo(
            id=self.id, repo=self.repo, revision=self.revision, quant=self.quant, files=[f.name for f in self.files],
            state=self.state, bytes_done=self.bytes_done, bytes_total=self.bytes_total, speed=speed,
            eta_s=eta_seconds(self.bytes_total - self.bytes_done, speed) if self.state == "running" else None,
            current_file=self.current_file, paths=list(self.paths), error=self.error, error_code=self.error_code,
            attempts=self.attempts, error_data=self.error_data,
        )

    # ---- control (any thread) ---------------------------------------------
    def request_stop(self, what: str) -> None:
        with self._lock:
            self._request = what
            sock = self._socket
        self._wake.set()
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes a read blocked on a stalled server
            except OSError:
                pass

    def _check(self) -> None:
        if self._request is not None:
            raise _Stopped()

    # ---- the work (its own thread) ------------------------------------------
    def start_thread(self) -> None:
        self._request = None
        self._wake.clear()
        self.error = self.error_code = self.error_data = None
        self.attempts = 0
        self.state = "running"
        self.meter.reset()
        self.thread = threading.Thread(target=self._run, name=f"download-{self.id}", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        client = httpx2.Client(follow_redirects=True, timeout=TIMEOUT)
        try:
            for f in self.files:
                if not f.done:
                    self.current_file = f.name
                    self._fetch(client, f)
                    f.done = True
                    self.manager.save(self)
            self.paths = self._finish_snapshot()
            self.state = "done"
            self.current_file = ""
        except _Stopped:
            self.state = "cancelled" if self._request == "cancel" else "paused"
        except RpcError as exc:
            self.state, self.error, self.error_code = "failed", exc.message, exc.code
            self.error_data = exc.data if isinstance(exc.data, dict) else None
        except Exception as exc:  # a bug: say so instead of hanging in "running"
            log.exception("download %s failed", self.id)
            self.state, self.error, self.error_code = "failed", f"internal error: {type(exc).__name__}: {exc}", int(ErrorCode.INTERNAL_ERROR)
        finally:
            client.close()
        if self.state == "cancelled":
            self.discard_partials()
        self.manager.finished(self)

    def _fetch(self, client: httpx2.Client, f: PlannedFile) -> None:
        """Fetch the blob unless it is in the cache (ours, another process's, another Hugging Face tool's), and give it its snapshot name."""
        lock = self._lock_blob(f)
        try:
            if not self._in_cache(f):
                self._fetch_locked(client, f)
            self._place(f)
        finally:
            lock.release()

    def _in_cache(self, f: PlannedFile) -> bool:
        """The verified bytes are here: as the blob, or as the snapshot file it was moved to (no symlinks)."""
        return any(p.exists() and p.stat().st_size == f.size for p in (self.blob(f), self.snapshot_path(f)))

    def on_disk(self) -> bool:
        return all(self.snapshot_path(f).exists() for f in self.files)

    def _lock_blob(self, f: PlannedFile) -> FileLock:
        """This blob's lock, once no other process (or download) holds it; says "waiting" meanwhile."""
        path = self.lock_path(f)
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(path)
        try:
            lock.acquire(blocking=False)
            return lock
        except Timeout:
            pass
        log.info("download %s: another process is fetching %s; waiting for it", self.id, f.name)
        self.state = "waiting"
        self.manager._emit(self)
        while True:
            if self._wake.wait(LOCK_RETRY_S):
                self._check()
            try:
                lock.acquire(blocking=False)
                break
            except Timeout:
                continue
        self.state = "running"
        self.bytes_done = self._bytes_on_disk()
        return lock

    def discard_partials(self) -> None:
        """Delete the partial files of this download, unless another process is writing one now."""
        for f in self.files:
            lock = FileLock(self.lock_path(f))
            try:
                lock.acquire(blocking=False)
            except Timeout:
                continue  # someone else's download of the same blob: theirs to keep
            try:
                self.partial(f).unlink(missing_ok=True)
            finally:
                lock.release()
        self.bytes_done = self._bytes_on_disk()

    def _fetch_locked(self, client: httpx2.Client, f: PlannedFile) -> None:
        blob, partial = self.blob(f), self.partial(f)
        blob.parent.mkdir(parents=True, exist_ok=True)
        url = hf.file_url(self.repo, f.name, self.commit)
        digest = _Digest()
        failures = 0
        while True:
            self._check()
            offset = partial.stat().st_size if partial.exists() else 0
            if offset > f.size:
                partial.unlink()
                offset = 0
            self.bytes_done = self._bytes_on_disk()
            if digest.length != offset:  # bytes written by an earlier run (or a torn write): hash what is on disk
                digest = _Digest.of_file(partial, offset)
            try:
                self._stream(client, url, f, partial, offset, digest)
                break
            except (TransientError, httpx2.TransportError) as exc:
                self._check()  # a pause or cancel shut the socket: not a network failure
                failures = 1 if digest.length > offset else failures + 1
                if failures > self.manager.max_retries:
                    raise from_exception(TransientError(str(exc)), f"{self.repo}/{f.name}", hf.token() is not None) from None
                self.attempts += 1
                delay = min(self.manager.backoff_s * 2 ** (failures - 1), MAX_BACKOFF_S)
                log.warning("download %s: %s; retry %d in %.1fs", self.id, exc, failures, delay)
                if self._wake.wait(delay):
                    self._check()
        self.state = "verifying"
        size = partial.stat().st_size
        actual = digest.sha.hexdigest()
        if size != f.size or (f.sha256 is not None and actual != f.sha256):
            partial.unlink(missing_ok=True)
            self.bytes_done = self._bytes_on_disk()
            raise RpcError(
                ErrorCode.CHECKSUM_MISMATCH,
                f"{f.name} arrived corrupted ({size} bytes, sha256 {actual}; the hub says {f.size} bytes, sha256 {f.sha256}): the file was deleted",
                {"file": f.name, "expected_sha256": f.sha256, "actual_sha256": actual},
            )
        os.replace(partial, blob)
        self.state = "running"

    def _stream(self, client: httpx2.Client, url: str, f: PlannedFile, partial: Path, offset: int, digest: "_Digest") -> None:
        """Append the bytes after `offset` to `partial`, hashing them into `digest` as they are written."""
        headers = hf.headers()
        if offset:
            headers["Range"] = f"bytes={offset}-"
        with client.stream("GET", url, headers=headers) as response:
            if response.status_code == 416 and offset == f.size:
                return
            if response.status_code == 429 or response.status_code >= 500:
                raise TransientError(f"HTTP {response.status_code}")
            if response.status_code >= 400:
                from huggingface_hub.utils import hf_raise_for_status

                response.read()
                try:
                    hf_raise_for_status(response)
                except Exception as exc:
                    raise from_exception(exc, f"{self.repo}/{f.name}", hf.token() is not None) from None
            mode = "ab"
            if offset and response.status_code == 200:  # the server ignored the range: start over
                self.bytes_done -= offset
                mode, offset = "wb", 0
                digest.reset()
            stream = response.extensions.get("network_stream")
            with self._lock:
                self._socket = stream.get_extra_info("socket") if stream is not None else None
            try:
                self._check()
                # Unbuffered: nothing is left to flush at close, so a full disk is met in a write below,
                # never at close, where its error would replace the disk_full raised for it.
                with open(partial, mode, buffering=0) as out:
                    unchecked = 0
                    for chunk in response.iter_raw():  # as the socket delivers: a drop loses nothing already received
                        self._check()
                        unchecked += len(chunk)
                        if unchecked >= FLOOR_CHECK_BYTES:
                            unchecked = 0
                            self._check_floor(partial, f.size - digest.length, f.name)
                        self._write(out, chunk, f.name)
                        digest.update(chunk)
                        self.bytes_done += len(chunk)
                        self.meter.add(self.bytes_done)
                    try:
                        os.fsync(out.fileno())
                    except OSError as exc:
                        raise _disk_error(exc, f.name) from None
            finally:
                with self._lock:
                    self._socket = None
        if digest.length < f.size:
            raise TransientError(f"the connection closed after {digest.length} of {f.size} bytes")

    @staticmethod
    def _write(out: IO[bytes], chunk: bytes, name: str) -> None:
        """All of `chunk`: an unbuffered write may take only part of it."""
        view = memoryview(chunk)
        try:
            while view:
                view = view[out.write(view) :]
        except OSError as exc:
            raise _disk_error(exc, name) from None

    @staticmethod
    def _check_floor(partial: Path, still_needed: int, name: str) -> None:
        """Stop (as a full disk would) once the rest of the file no longer fits above the free-space floor."""
        room = disk_space.room_bytes(partial)
        if still_needed > room:
            raise disk_full(name, still_needed, disk_space.free_bytes(partial), disk_space.floor_bytes(partial))

    def _place(self, f: PlannedFile) -> None:
        """Give the verified blob its name where Hugging Face tools look, snapshots/<commit>/<file> (under the blob's lock).

        A relative symlink, as huggingface_hub makes, swapped in atomically. Where symlinks are refused
        (Windows without developer mode), the blob itself is moved there, never copied: a copy would
        take the model's size twice, and `lokal rm` would free only one of them.
        """
        link, blob = self.snapshot_path(f), self.blob(f)
        if not blob.exists():
            return  # moved to its snapshot path already, where symlinks are refused
        link.parent.mkdir(parents=True, exist_ok=True)
        temporary = link.with_name(f".{link.name}.{uuid.uuid4().hex[:12]}.link")
        try:
            os.symlink(os.path.relpath(blob, link.parent), temporary)
        except FileExistsError:
            raise
        except OSError as exc:
            log.info("download %s: no symlinks here (%s); moving %s to its snapshot path", self.id, exc, f.name)
            os.replace(blob, link)
            return
        os.replace(temporary, link)

    def _finish_snapshot(self) -> list[str]:
        """The snapshot paths (placed as each file was fetched; a record from before that is placed now), and the revision's ref."""
        paths = []
        for f in self.files:
            link = self.snapshot_path(f)
            if not link.exists():
                lock = self._lock_blob(f)
                try:
                    self._place(f)
                finally:
                    lock.release()
            paths.append(str(link))
        if self.revision != self.commit:
            refs = names.inside(self.folder, self.folder / "refs" / self.revision)
            refs.parent.mkdir(parents=True, exist_ok=True)
            refs.write_text(self.commit)
        return paths


def _disk_error(exc: OSError, name: str) -> Exception:
    """A full disk as the error a user can act on; any other OSError as it came."""
    return disk_full(name) if exc.errno == errno.ENOSPC else exc


def _check_names(repo: str, revision: str, commit: str, files: list[PlannedFile]) -> None:
    """Every name that becomes part of a path in the cache, refused before anything touches the disk."""
    names.check_revision(revision)
    names.check_commit(repo, commit)
    for f in files:
        names.check_filename(repo, f.name)
        names.check_sha256(repo, f.name, f.sha256)


class _Digest:
    """sha256 of a file's first `length` bytes, kept in step with what is written."""

    def __init__(self) -> None:
        self.sha = hashlib.sha256()
        self.length = 0

    def update(self, data: bytes) -> None:
        self.sha.update(data)
        self.length += len(data)

    def reset(self) -> None:
        self.sha = hashlib.sha256()
        self.length = 0

    @classmethod
    def of_file(cls, path: Path, length: int) -> "_Digest":
        digest = cls()
        if length > 0:
            with open(path, "rb") as f:
                while digest.length < length and (block := f.read(min(CHUNK * 4, length - digest.length))):
                    digest.update(block)
        return digest


class DownloadManager:
    def __init__(
        self,
        on_update: Callable[[DownloadInfo], None],
        cache_dir: Path | None = None,
        state_dir: Path | None = None,
        progress_interval: float = PROGRESS_INTERVAL_S,
        max_retries: int = MAX_RETRIES,
        backoff_s: float = BACKOFF_S,
    ):
        from runtime.paths import data_dir

        self.on_update = on_update
        self.cache_dir = Path(cache_dir) if cache_dir else hub_cache_dir()
        self.state_dir = Path(state_dir) if state_dir else data_dir() / "downloads"
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.progress_interval = progress_interval
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self._lock = threading.Lock()
        self._downloads: dict[str, Download] = {}
        self._closed = threading.Event()
        self._load_saved()
        self._ticker = threading.Thread(target=self._tick, name="download-progress", daemon=True)
        self._ticker.start()

    # ---- persistence ----------------------------------------------------------
    def _load_saved(self) -> None:
        for path in sorted(self.state_dir.glob("*.json")):
            try:
                record = json.loads(path.read_text())
                download = Download(self, record)
            except (OSError, ValueError, KeyError, TypeError, RpcError) as exc:
                log.warning("ignoring unreadable download record %s: %s", path, exc)
                continue
            if download.state in ACTIVE:
                download.state = "paused"  # the runtime stopped while it ran: resumable
            self._downloads[download.id] = download

    def save(self, download: Download) -> None:
        path = self.state_dir / f"{download.id}.json"
        # Two runtimes (the window's, a `lokal pull`'s) may save one download: each writes its own temporary file.
        tmp = path.with_name(f"{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps(download.record()))
        os.replace(tmp, path)

    def _forget(self, download: Download) -> None:
        (self.state_dir / f"{download.id}.json").unlink(missing_ok=True)

    def _drop(self, download: Download) -> None:
        self._forget(download)
        with self._lock:
            self._downloads.pop(download.id, None)

    # ---- progress -------------------------------------------------------------
    def _tick(self) -> None:
        # A clock, not a poll: progress goes out on time even while a server stalls.
        while not self._closed.wait(self.progress_interval):
            with self._lock:
                running = [d for d in self._downloads.values() if d.state in ACTIVE]
            for d in running:
                self._emit(d)

    def _emit(self, download: Download) -> None:
        try:
            self.on_update(download.info())
        except Exception:
            log.exception("download progress handler failed")

    def finished(self, download: Download) -> None:
        if download.state == "cancelled":
            self._forget(download)
        else:
            self.save(download)
        self._emit(download)

    # ---- the API ----------------------------------------------------------------
    def start(self, params: DownloadStartParams) -> DownloadInfo:
        """Plan a download (one hub call), check the disk, and start it on its own thread."""
        names.check_revision(params.revision)
        listing = list_repo(params.repo, params.revision)
        if params.files:
            by_name = {f.path: f for f in listing.files}
            missing = [name for name in params.files if name not in by_name]
            if missing:
                raise RpcError(ErrorCode.FILE_NOT_FOUND, f"not in {params.repo}: {', '.join(missing)}", {"repo": params.repo, "files": missing})
            remote = [by_name[name] for name in params.files]
            quant = params.quant or ""
        else:
            levels = listing.levels
            level = find_level(levels, params.quant)
            if level is None:
                available = ", ".join(lv.name for lv in levels) or "none"
                what = f"quantization {params.quant!r}" if params.quant else "GGUF file"
                raise RpcError(ErrorCode.FILE_NOT_FOUND, f"no {what} in {params.repo} (available: {available})", {"repo": params.repo, "available": [lv.name for lv in levels]})
            problem = incomplete_split(level)
            if problem:
                raise RpcError(ErrorCode.FILE_NOT_FOUND, f"{params.repo}: {problem}", {"repo": params.repo})
            remote, quant = level.files, level.name
            projector = pick_projector(listing.files, _catalog_projector(params.repo)) if params.with_mmproj else None
            if projector is not None:  # a vision model sees only with its projector: one download, one progress bar
                remote = [*remote, projector]
        files = [PlannedFile(f.path, f.size, f.sha256) for f in remote]
        _check_names(params.repo, params.revision, listing.commit, files)
        with self._lock:
            for d in self._downloads.values():
                if d.repo == params.repo and d.commit == listing.commit and [f.name for f in d.files] == [f.name for f in files] and d.state not in ("cancelled",):
                    existing = d
                    break
            else:
                existing = None
        if existing is not None and existing.state == "done" and not existing.on_disk():
            self._drop(existing)  # done once, deleted since: download it again
            existing = None
        if existing is not None:
            if existing.state in ("paused", "failed"):
                return self.resume(existing.id)
            return existing.info()
        download = Download(self, {"id": uuid.uuid4().hex[:12], "repo": params.repo, "revision": params.revision, "commit": listing.commit, "quant": quant, "files": [f.__dict__ for f in files], "state": "queued"})
        self._check_disk(download)
        with self._lock:
            self._downloads[download.id] = download
        download.start_thread()
        self.save(download)
        return download.info()

    def _check_disk(self, download: Download) -> None:
        """A download starts (or resumes) only if it fits above the free-space floor it shares with the KV store."""
        needed = download.bytes_total - download._bytes_on_disk()
        room = disk_space.room_bytes(download.folder)
        if needed > room:
            raise disk_full(f"{download.repo} {download.quant}".strip(), needed, disk_space.free_bytes(download.folder), disk_space.floor_bytes(download.folder))

    def get(self, download_id: str) -> Download:
        with self._lock:
            download = self._downloads.get(download_id)
        if download is None:
            raise RpcError(ErrorCode.DOWNLOAD_NOT_FOUND, f"no download with id {download_id!r}", {"id": download_id})
        return download

    def pause(self, download_id: str) -> DownloadInfo:
        download = self.get(download_id)
        if download.state in ACTIVE:
            download.request_stop("pause")
            if download.thread is not None:
                download.thread.join(timeout=10)
        return download.info()

    def resume(self, download_id: str) -> DownloadInfo:
        download = self.get(download_id)
        if download.state in ("paused", "failed"):
            self._check_disk(download)
            download.start_thread()
            self.save(download)
            self._emit(download)
        return download.info()

    def cancel(self, download_id: str) -> DownloadInfo:
        download = self.get(download_id)
        if download.state in ACTIVE:
            download.request_stop("cancel")
            if download.thread is not None:
                download.thread.join(timeout=10)
        elif download.state in ("paused", "failed"):
            download.discard_partials()
            download.state = "cancelled"
            self.finished(download)
        with self._lock:
            self._downloads.pop(download_id, None)
        return download.info()

    def list(self) -> list[DownloadInfo]:
        with self._lock:
            downloads = list(self._downloads.values())
        gone = [d for d in downloads if d.state == "done" and not d.on_disk()]
        for d in gone:
            self._drop(d)  # its files were removed since (`lokal rm`, another tool): it is no longer "done"
        return [d.info() for d in downloads if d not in gone]

    def close(self) -> None:
        """Pause everything (resumable at the next start) and stop the clock."""
        self._closed.set()
        with self._lock:
            running = [d for d in self._downloads.values() if d.state in ACTIVE]
        for d in running:
            d.request_stop("pause")
        for d in running:
            if d.thread is not None:
                d.thread.join(timeout=10)
