"""Names from the hub (or a mirror set with HF_ENDPOINT) checked before they become paths in the cache.

A repository lists its files, its commit id and each file's sha256, and the
downloader turns them into `snapshots/<commit>/<file>`, `blobs/<sha256>` and
`refs/<revision>`. A crafted repository or a hostile mirror could name
`../../x`, an absolute path, a Windows drive or UNC path, or a name with a
backslash or control characters; any of these would write outside the cache.
So a file name or revision must be a plain relative path of `/`-separated
parts (no empty, `.` or `..` part, no backslash, no `:`, no control
character), a commit id 40 hex digits and a sha256 64; anything else is
refused with an error that names it, before a byte is written.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from runtime.protocol import ErrorCode, RpcError

_COMMIT = re.compile(r"[0-9a-f]{40}")
_SHA256 = re.compile(r"[0-9a-fA-F]{64}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def path_problem(name: str) -> str | None:
    """Why `name` is not a safe relative path inside a folder, or None."""
    if not name:
        return "it is empty"
    if _CONTROL.search(name):
        return "it contains a control character"
    if "\\" in name:
        return "it contains a backslash (a Windows path separator)"
    if ":" in name:
        return "it contains ':' (a Windows drive letter or stream)"
    if name.startswith("/"):
        return "it is an absolute path"
    if any(part in ("", ".", "..") for part in name.split("/")):
        return "it has an empty, '.' or '..' part"
    return None


def _refuse(what: str, name: str, problem: str, code: ErrorCode = ErrorCode.HUB_ERROR) -> RpcError:
    return RpcError(code, f"refused {what} {name!r}: {problem}; nothing was written", {"name": name, "what": what})


def check_filename(repo: str, name: str) -> str:
    problem = path_problem(name)
    if problem:
        raise _refuse(f"the file name that {repo} lists", name, problem)
    return name


def check_revision(name: str) -> str:
    """A revision the user asked for (a branch, tag or commit): it names a file under refs/."""
    problem = path_problem(name)
    if problem:
        raise _refuse("the revision", name, problem, ErrorCode.INVALID_PARAMS)
    return name


def check_commit(repo: str, commit: str) -> str:
    if not _COMMIT.fullmatch(commit or ""):
        raise _refuse(f"the commit id that {repo} reports", commit, "a commit id is 40 hex digits")
    return commit


def check_sha256(repo: str, name: str, sha256: str | None) -> str | None:
    if sha256 is not None and not _SHA256.fullmatch(sha256):
        raise _refuse(f"the sha256 that {repo} reports for {name}", sha256, "a sha256 is 64 hex digits")
    return sha256


def inside(folder: Path, path: Path) -> Path:
    """`path`, once it is certain to lie inside `folder` (lexically: links are not followed)."""
    root = os.path.abspath(folder)
    full = os.path.abspath(path)
    if os.path.commonpath([root, full]) != root:
        raise _refuse("the path", str(path), f"it lies outside {folder}")
    return path
