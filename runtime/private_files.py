"""Lokal's own files are the user's alone: folders 0700, files 0600.

Conversations (the SQLite file and its -wal/-shm), saved KV states (token ids
that any copy of the tokenizer turns back into text), download plans and logs
all say what the user wrote. Under the usual umask (022) they would be
readable by every local account, so:

- Lokal's folders (runtime.paths: data, cache, config, logs, the runtime dir
  for sockets) are created 0700, which alone keeps everything inside them
  from other accounts;
- the runtime process and the headless commands set their umask to 077
  (`restrict_umask`), so whatever they or their libraries (llama.cpp,
  huggingface_hub, SQLite) create is 0600 too. The window keeps the user's
  umask, because programs it starts (the browser a link opens, the file
  manager of Help ▸ Open log folder) would inherit it; it creates its own
  files 0600 one by one (`private_opener`, the store's database file);
- folders and files that an older Lokal created 0755/0644 are tightened on
  start-up (`tighten`), and the log says how many;
- files the user exports go where the user chose, with the user's umask
  (`user_umask`), as any program's saved files do.

POSIX modes only: on Windows, a user's profile folders are already private to
the user by their ACLs, and chmod can only set the read-only flag, so
`tighten` does nothing there.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
from pathlib import Path
from typing import Iterable

log = logging.getLogger("lokal.private_files")

DIR_MODE = 0o700
FILE_MODE = 0o600
PRIVATE_UMASK = 0o077
_OTHERS = stat.S_IRWXG | stat.S_IRWXO

_umask_lock = threading.Lock()
_user_umask: int | None = None  # the umask this process started with, once restrict_umask changed it


def restrict_umask() -> None:
    """From now on this process creates files 0600 and folders 0700 (the user's own umask is remembered)."""
    global _user_umask
    with _umask_lock:
        previous = os.umask(PRIVATE_UMASK)
        if _user_umask is None:
            _user_umask = previous


def user_umask() -> int:
    """The umask the user runs Lokal with, whether or not this process restricted its own."""
    with _umask_lock:
        if _user_umask is not None:
            return _user_umask
        current = os.umask(PRIVATE_UMASK)  # there is no way to read the umask without setting it
        os.umask(current)
        return current


def private_opener(path: str, flags: int) -> int:
    """For open(..., opener=private_opener): a file this creates is 0600 whatever the umask."""
    return os.open(path, flags, FILE_MODE)


def private_dir(path: Path, must_own: bool = False) -> Path:
    """Create `path` (and missing parents) as 0700; an existing folder of ours is made 0700 if others could enter it.

    A folder another account owns (a shared mount) is left as it is, unless `must_own`: then PermissionError.
    """
    path.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    if os.name == "posix":
        st = path.stat()
        if st.st_uid != os.getuid():
            if must_own:
                raise PermissionError(f"{path} belongs to another account (uid {st.st_uid})")
            return path
        if st.st_mode & _OTHERS:
            os.chmod(path, stat.S_IMODE(st.st_mode) & ~_OTHERS | stat.S_IRWXU)
    return path


def create_private_file(path: Path) -> None:
    """Create an empty `path` as 0600 if it is missing (before a library opens it with the umask's mode)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    except FileExistsError:
        pass


def tighten(folders: Iterable[Path]) -> int:
    """Take group's and others' bits off every folder and file under `folders`; returns how many changed.

    Symbolic links are left alone (and not followed): the hub cache's snapshots link to its blobs,
    which the walk reaches on their own; a link elsewhere points at something that is not Lokal's.
    """
    if os.name != "posix":
        return 0
    changed = 0
    seen: set[Path] = set()
    for folder in folders:
        folder = Path(folder)
        if folder in seen or not folder.is_dir() or folder.is_symlink():
            continue
        seen.add(folder)
        changed += _tighten_one(folder)
        for root, dirs, files in os.walk(folder):
            for name in dirs + files:
                changed += _tighten_one(Path(root) / name)
    return changed


def tighten_file(path: Path) -> bool:
    """Take group's and others' bits off one file or folder (not a link); False if it had none or is missing."""
    return os.name == "posix" and _tighten_one(Path(path)) == 1


def _tighten_one(path: Path) -> int:
    try:
        st = path.lstat()
        if stat.S_ISLNK(st.st_mode) or not st.st_mode & _OTHERS or st.st_uid != os.getuid():
            return 0
        os.chmod(path, stat.S_IMODE(st.st_mode) & ~_OTHERS)
        return 1
    except OSError as exc:  # gone meanwhile (another process's temp file), or not ours to change
        log.debug("cannot tighten %s: %s", path, exc)
        return 0


def tighten_own_folders() -> int:
    """On start-up: Lokal's own folders, and what an older Lokal left in them, become private; logged if any changed."""
    from runtime import paths

    folders = [paths.data_dir(), paths.config_dir(), paths.cache_dir(), paths.log_dir()]
    changed = tighten(folders)
    if changed:
        log.info(
            "made %d files and folders private (others could read them) in %s",
            changed, ", ".join(str(f) for f in folders),
        )
    return changed

