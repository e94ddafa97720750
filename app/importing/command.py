"""`lokal import FILE`: conversations from an export file into the conversations database, without the window.

The window runs it too, as a child process through this same executable (File ▸ Import conversations…): a
large export (a ChatGPT `conversations.json` of 100,000 messages is 65 MiB) takes seconds of JSON parsing, checking
and writing, all Python that would hold the window's GIL, so its event loop would wait on it. The child writes
through a connection of its own (SQLite's WAL lets the window read meanwhile) and leaves a reply the window is
streaming as it is. `--json` prints one line: the summary (service.ImportedInto), or {"error": why}. `--progress`
prints, before it, a line {"progress": {"done": n, "total": m}} (service.ImportedSoFar) as it writes (done 0 once
the file is read). With `--stop-when-stdin-closes` (the window's), the end of its standard input stops it and takes
back what it wrote: that is the window's Cancel, and a window that went away.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sqlite3
import sys
import threading
from pathlib import Path
from typing import Callable

from app.own_command import own_command


def add_parser(sub) -> None:
    p = sub.add_parser("import", help="import conversations from an export (Lokal, ChatGPT, LM Studio, Open WebUI)",
                       description="Import the conversations of an export file: all of them, or none if one field is wrong.")
    p.add_argument("file", type=Path, help="the export: Lokal's JSON, ChatGPT's conversations.json, an LM Studio conversation, Open WebUI's chat export")
    p.add_argument("--store", type=Path, help="the conversations database (default: the one the window uses)")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON line")
    p.add_argument("--progress", action="store_true", help='print how far it got as it writes, a JSON line each: {"progress": {"done": N, "total": M}}')
    p.add_argument("--stop-when-stdin-closes", action="store_true",
                   help="stop, keeping nothing of the file, once standard input ends (how the window cancels an import)")
    p.set_defaults(run=run)


def command(file: str | Path, store: str | Path) -> list[str]:
    """How the window starts the import: `lokal import FILE --store STORE --json`, through this same executable."""
    return own_command("import", str(file), "--store", str(store), "--json", "--progress", "--stop-when-stdin-closes")


def run(args: argparse.Namespace) -> int:
    from app.importing import service
    from app.importing.conversation import ImportRefused
    from app.storage.store import SchemaTooNew, Store, StoreUnavailable, WriteStopped, default_path

    try:
        store = Store(args.store or default_path(), beside_window=True)
    except (sqlite3.Error, StoreUnavailable, SchemaTooNew, OSError) as exc:  # a damaged file is the window's to set aside, not this
        return _failed(args, f"cannot open the conversations database: {exc}")
    try:
        summary = service.import_file(store, args.file, _say_progress if args.progress else None, _stdin_closed() if args.stop_when_stdin_closes else None)
    except WriteStopped:
        return _failed(args, "stopped: nothing of the file was kept")
    except ImportRefused as exc:
        return _failed(args, str(exc))
    except StoreUnavailable as exc:
        return _failed(args, exc.message)
    except (OSError, MemoryError) as exc:
        return _failed(args, f"could not read {args.file.name}: {getattr(exc, 'strerror', None) or exc}")
    finally:
        store.close()
    if args.json:
        print(json.dumps(dataclasses.asdict(summary.told())))
    else:
        print(f"imported {len(summary.added)} conversations ({summary.messages} messages) from {summary.format}; "
              f"{summary.skipped} imported before and skipped; {summary.attachments_not_found} attached files not found here")
    return 0


def _stdin_closed() -> Callable[[], bool]:
    """A test that turns true once standard input ends: a thread reads it (nothing is sent on it) until it does."""
    closed = threading.Event()

    def read_to_the_end() -> None:
        while sys.stdin.buffer.read(4096):
            pass
        closed.set()

    threading.Thread(target=read_to_the_end, name="stdin-watch", daemon=True).start()
    return closed.is_set


def _say_progress(done: int, total: int) -> None:
    from app.importing.service import ImportedSoFar

    print(json.dumps(ImportedSoFar(done, total).to_json()), flush=True)  # now: the window shows it as it comes


def _failed(args: argparse.Namespace, why: str) -> int:
    print(json.dumps({"error": why}) if args.json else f"nothing was imported: {why}", file=sys.stdout if args.json else sys.stderr)
    return 1
