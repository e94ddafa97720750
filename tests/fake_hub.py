"""A Hugging Face-compatible hub on 127.0.0.1, serving real GGUF files, with fault injection.

It speaks the parts of the hub's HTTP API that huggingface_hub and Lokal use:

- HEAD and GET /{repo}/resolve/{revision}/{file}: X-Repo-Commit, ETag and
  X-Linked-Etag (the sha256 of an LFS file), X-Linked-Size, and Range (206
  with Content-Range, 416 past the end);
- GET /api/models (search, filter, sort, limit), /api/models/{repo} and
  /api/models/{repo}/revision/{rev} (siblings with LFS sha256 when blobs=true),
  /api/models/{repo}/tree/{rev}, POST /api/models/{repo}/paths-info/{rev};
- errors as the hub sends them: 404 with X-Error-Code RepoNotFound,
  RevisionNotFound or EntryNotFound; a gated repository answers 401 without a
  token and 403 with a token that has no access (X-Error-Code GatedRepo).

Faults, set per file by a test: drop the connection after N bytes (a number of
times), flip a byte (corruption), stall after N bytes until released, answer
with given statuses first (503...), ignore Range, and limit the rate; or act as
a hostile mirror that answers any revision and serves bytes at any path.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

CHUNK = 256 * 1024


@dataclass
class FakeFile:
    source: Path | None = None  # bytes come from this file...
    data: bytes | None = None  # ...or from memory
    lfs: bool = True
    offset: int = 0  # a slice of `source` (to split a real file into shards)
    length: int | None = None
    _sha256: str | None = None
    # A file known by its recorded size only (tests/data/hub): `data` (a header, or nothing) then zeros up to it.
    declared_size: int | None = None

    @property
    def size(self) -> int:
        if self.declared_size is not None:
            return self.declared_size
        if self.data is not None:
            return len(self.data)
        assert self.source is not None, "a FakeFile holds its data, declares its size or names its source"
        return self.length if self.length is not None else self.source.stat().st_size - self.offset

    def read(self, start: int, end: int) -> bytes:
        """Bytes [start, end)."""
        if self.declared_size is not None:
            end = min(end, self.declared_size)
            head = (self.data or b"")[start:end]
            return head + b"\0" * max(end - start - len(head), 0)
        if self.data is not None:
            return self.data[start:end]
        assert self.source is not None, "a FakeFile holds its data, declares its size or names its source"
        with open(self.source, "rb") as f:
            f.seek(self.offset + start)
            return f.read(end - start)

    @property
    def sha256(self) -> str:
        if self._sha256 is None:
            h = hashlib.sha256()
            pos = 0
            while pos < self.size:
                block = self.read(pos, min(pos + (8 << 20), self.size))
                h.update(block)
                pos += len(block)
            self._sha256 = h.hexdigest()
        return self._sha256

    @property
    def git_oid(self) -> str:
        return hashlib.sha1(f"blob {self.size}\0".encode() + (self.data or b"")).hexdigest()


@dataclass
class FakeRepo:
    files: dict[str, FakeFile]
    commit: str = ""
    gated: bool = False
    downloads: int = 0
    likes: int = 0
    tags: list[str] = field(default_factory=lambda: ["gguf"])

    def __post_init__(self):
        if not self.commit:
            self.commit = hashlib.sha1(json.dumps(sorted(self.files)).encode()).hexdigest()


@dataclass
class Faults:
    drop_after: dict[str, tuple[int, int]] = field(default_factory=dict)  # file -> (offset, how many times)
    corrupt: set[str] = field(default_factory=set)
    stall_after: dict[str, int] = field(default_factory=dict)  # file -> offset to stall at
    statuses: dict[str, list[int]] = field(default_factory=dict)  # file -> statuses to answer first
    ignore_range: bool = False
    missing: set[str] = field(default_factory=set)  # listed by the API, 404 EntryNotFound from storage
    rate: float | None = None  # bytes per second per response
    # A hostile mirror: every revision "exists", and a path that names nothing gets these bytes.
    any_revision: bool = False
    any_path: FakeFile | None = None


class FakeHub:
    TOKEN = "hf_lokal_test_token"

    def __init__(self, repos: dict[str, FakeRepo]):
        self.repos = repos
        self.faults = Faults()
        self.release = threading.Event()  # lets stalled responses go on
        self.stalled = threading.Event()  # set when a response stalls
        self.requests: list[tuple[str, str, str | None]] = []
        self._lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"hub": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, name="fake-hub", daemon=True)

    def __enter__(self) -> "FakeHub":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()

    def log(self, method: str, path: str, range_header: str | None) -> None:
        with self._lock:
            self.requests.append((method, path, range_header))

    def ranges_for(self, filename: str) -> list[str | None]:
        return [r for m, p, r in self.requests if m == "GET" and p.endswith("/" + filename)]


_RESOLVE = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<file>.+)$")
_API_MODEL = re.compile(r"^/api/models/(?P<repo>[^/]+/[^/]+?)(?:/revision/(?P<rev>[^/]+))?$")
_API_TREE = re.compile(r"^/api/models/(?P<repo>[^/]+/[^/]+)/tree/(?P<rev>[^/]+)(?:/(?P<path>.*))?$")
_API_PATHS = re.compile(r"^/api/models/(?P<repo>[^/]+/[^/]+)/paths-info/(?P<rev>[^/]+)$")
_RANGE = re.compile(r"bytes=(\d+)-(\d*)$")


class _Handler(BaseHTTPRequestHandler):
    hub: FakeHub
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # keep test output clean
        pass

    # ---- helpers ----------------------------------------------------------
    def _send(self, status: int, body: bytes = b"", headers: dict | None = None, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, data, status: int = 200) -> None:
        self._send(status, json.dumps(data).encode())

    def _error(self, status: int, code: str, message: str) -> None:
        self._send(status, json.dumps({"error": message}).encode(), {"X-Error-Code": code, "X-Error-Message": message})

    def _repo(self, repo_id: str, rev: str | None) -> FakeRepo | None:
        repo = self.hub.repos.get(urllib.parse.unquote(repo_id))
        if repo is None:
            self._error(404, "RepoNotFound", "Repository not found")
            return None
        if rev is not None and urllib.parse.unquote(rev) not in ("main", repo.commit) and not self.hub.faults.any_revision:
            self._error(404, "RevisionNotFound", "Invalid rev id")
            return None
        return repo

    def _file_entry(self, path: str, f: FakeFile) -> dict:
        entry = {"type": "file", "path": path, "size": f.size, "oid": f.git_oid}
        if f.lfs:
            entry["lfs"] = {"oid": f.sha256, "size": f.size, "pointerSize": 134}
        return entry

    # ---- the API ------------------------------------------------------------
    def do_GET(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        self.hub.log("GET", url.path, self.headers.get("Range"))
        if url.path == "/api/models":
            return self._list_models(urllib.parse.parse_qs(url.query))
        if m := _API_TREE.match(url.path):
            repo = self._repo(m["repo"], m["rev"])
            if repo:
                prefix = (m["path"] or "").strip("/")
                self._json([self._file_entry(p, f) for p, f in sorted(repo.files.items()) if p.startswith(prefix)])
            return
        if m := _API_MODEL.match(url.path):
            repo = self._repo(m["repo"], m["rev"])
            if repo:
                self._json(self._model_info(urllib.parse.unquote(m["repo"]), repo, "blobs=true" in url.query))
            return
        if m := _RESOLVE.match(url.path):
            return self._resolve(m, send_body=True)
        if self.hub.faults.any_path is not None:
            data = self.hub.faults.any_path.read(0, self.hub.faults.any_path.size)
            return self._send(200, data, content_type="application/octet-stream")
        self._error(404, "NotFound", "no such endpoint")

    def do_HEAD(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        self.hub.log("HEAD", url.path, self.headers.get("Range"))
        if m := _RESOLVE.match(url.path):
            return self._resolve(m, send_body=False)
        self._send(404)

    def do_POST(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode()
        self.hub.log("POST", url.path, None)
        if m := _API_PATHS.match(url.path):
            repo = self._repo(m["repo"], m["rev"])
            if repo:
                paths = urllib.parse.parse_qs(body).get("paths", [])
                self._json([self._file_entry(p, repo.files[p]) for p in paths if p in repo.files])
            return
        self._error(404, "NotFound", "no such endpoint")

    def _model_info(self, repo_id: str, repo: FakeRepo, blobs: bool) -> dict:
        siblings = []
        for path, f in sorted(repo.files.items()):
            s: dict[str, object] = {"rfilename": path}
            if blobs:
                s.update({"size": f.size, "blobId": f.git_oid})
                if f.lfs:
                    s["lfs"] = {"size": f.size, "sha256": f.sha256, "pointerSize": 134}
            siblings.append(s)
        return {
            "id": repo_id, "modelId": repo_id, "sha": repo.commit, "gated": "manual" if repo.gated else False,
            "private": False, "downloads": repo.downloads, "likes": repo.likes, "tags": repo.tags,
            "lastModified": "2026-01-01T00:00:00.000Z", "siblings": siblings,
        }

    def _list_models(self, query: dict) -> None:
        search = (query.get("search") or [""])[0].lower()
        filters = query.get("filter", [])
        limit = int((query.get("limit") or ["1000"])[0])
        found = [
            (rid, r) for rid, r in self.hub.repos.items()
            if search in rid.lower() and all(f in r.tags for f in filters)
        ]
        if (query.get("sort") or [""])[0] == "downloads":
            found.sort(key=lambda item: -item[1].downloads)
        self._json([
            {"id": rid, "modelId": rid, "downloads": r.downloads, "likes": r.likes, "gated": "manual" if r.gated else False, "tags": r.tags, "lastModified": "2026-01-01T00:00:00.000Z"}
            for rid, r in found[:limit]
        ])

    # ---- files ------------------------------------------------------------------
    def _resolve(self, m: re.Match, send_body: bool) -> None:
        repo = self._repo(m["repo"], m["rev"])
        if repo is None:
            return
        name = urllib.parse.unquote(m["file"])
        f = repo.files.get(name)
        if f is None or name in self.hub.faults.missing:
            return self._error(404, "EntryNotFound", f"{name} does not exist on main")
        if repo.gated:
            auth = self.headers.get("Authorization", "")
            if not auth:
                return self._error(401, "GatedRepo", "Access to model is restricted. You must have access to it and be authenticated to access it. Please log in.")
            if auth != f"Bearer {FakeHub.TOKEN}":
                return self._error(403, "GatedRepo", "Access to model is restricted and you are not in the authorized list.")
        faults = self.hub.faults
        if send_body and faults.statuses.get(name):
            status = faults.statuses[name].pop(0)
            return self._error(status, "ServerError", "injected failure")
        size = f.size
        start, end = 0, size
        status = 200
        range_header = self.headers.get("Range")
        if range_header and not faults.ignore_range:
            r = _RANGE.match(range_header.strip())
            if r:
                start = int(r.group(1))
                end = min(int(r.group(2)) + 1, size) if r.group(2) else size
                if start >= size:
                    return self._send(416, b"", {"Content-Range": f"bytes */{size}"})
                status = 206
        etag = f'"{f.sha256}"' if f.lfs else f'"{f.git_oid}"'
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(end - start))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("X-Repo-Commit", repo.commit)
        self.send_header("ETag", etag)
        if f.lfs:
            self.send_header("X-Linked-Etag", etag)
            self.send_header("X-Linked-Size", str(size))
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end - 1}/{size}")
        self.end_headers()
        if not send_body:
            return
        self._stream_body(name, f, start, end)

    def _stream_body(self, name: str, f: FakeFile, start: int, end: int) -> None:
        faults = self.hub.faults
        pos = start
        began = time.monotonic()
        drop = faults.drop_after.get(name)
        stall_at = faults.stall_after.get(name)
        corrupt_at = f.size // 2 if name in faults.corrupt else None
        try:
            while pos < end:
                if drop and drop[1] > 0 and pos == drop[0]:
                    faults.drop_after[name] = (drop[0], drop[1] - 1)
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(2)  # the network goes away mid-file
                    return
                stop = min(pos + CHUNK, end)
                for limit in (drop[0] if drop and drop[1] > 0 else None, stall_at):
                    if limit is not None and pos < limit < stop:
                        stop = limit
                data = bytearray(f.read(pos, stop))
                if corrupt_at is not None and pos <= corrupt_at < stop:
                    data[corrupt_at - pos] ^= 0xFF
                self.wfile.write(data)
                pos = stop
                if stall_at is not None and pos == stall_at:
                    self.wfile.flush()
                    self.hub.stalled.set()
                    self.hub.release.wait(60)
                    stall_at = None
                if faults.rate:
                    ahead = (pos - start) / faults.rate - (time.monotonic() - began)
                    if ahead > 0:
                        time.sleep(ahead)  # the fake network's bandwidth
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True
