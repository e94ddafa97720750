"""How long File ▸ Import conversations… stalls the window on a large export: the GUI thread's longest stall.

Writes a ChatGPT `conversations.json` of --conversations chats of --messages messages each (tests/chatgpt_exports.py),
opens the real window offscreen over a fresh database (no model loaded), imports the file through the Import command
while a 5 ms StallProbe runs, and reports the import's wall time and the longest stall, own (less run-queue wait) and
wall-clock. Meanwhile the window writes to its database every --write-every-ms (one small app-state write, as a
streaming reply's checkpoint is): the longest of those writes and how many the database refused ("locked") say
whether the import shuts the window out of its own database.

With --cancel-at F, the import is cancelled (its Cancel button) once that fraction of the conversations is
written: the stalls then include taking back what it wrote, and cancel_to_end_s says how long that took.

    .venv/bin/python bench/import_stall.py [--conversations 2000] [--messages 50] [--write-every-ms 200] [--cancel-at 0.9]

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "bench")]
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from report import publish  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=2000)
    parser.add_argument("--messages", type=int, default=50)
    parser.add_argument("--write-every-ms", type=int, default=200, help="the window's own writes during the import (0: none)")
    parser.add_argument("--cancel-at", type=float, help="cancel once this fraction of the conversations is written")
    parser.add_argument("--json", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    from PySide6.QtCore import QCoreApplication, QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from app.main import create_main_window
    from app.storage.store import StoreUnavailable
    from app.ui.stall_probe import StallProbe
    from chatgpt_exports import write_chatgpt_export

    app = QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory() as scratch:
        export = write_chatgpt_export(Path(scratch) / "conversations.json", args.conversations, args.messages)
        window = create_main_window(store_path=Path(scratch) / "conversations.sqlite3", autoload=False)
        window.show()
        loop = QEventLoop()
        QTimer.singleShot(500, loop.quit)  # the window's first paint and start-up work, before the probe
        loop.exec()
        command = window.features["importing"]
        outcome: list[object] = []
        command.sig_finished.connect(outcome.append)
        command.sig_finished.connect(lambda _o: loop.quit())
        writes: list[float] = []
        refused: list[str] = []

        def write_once() -> None:
            began = time.perf_counter()
            try:
                window.store.set_state("bench:import-stall", str(began))
            except StoreUnavailable as exc:
                refused.append(exc.kind)
            writes.append(time.perf_counter() - began)

        cancelled_at: list[float] = []

        def cancel_when_far_enough(value: int) -> None:
            if args.cancel_at is not None and not cancelled_at and value >= args.cancel_at * args.conversations:
                cancelled_at.append(time.perf_counter())
                command.progress.cancel.click()

        command.progress.bar.valueChanged.connect(cancel_when_far_enough)
        writer = QTimer()
        writer.timeout.connect(write_once)
        probe = StallProbe(interval_ms=5)
        probe.start()
        started = time.perf_counter()
        command.import_path(export)
        if args.write_every_ms:
            writer.start(args.write_every_ms)
        loop.exec()
        took = time.perf_counter() - started
        writer.stop()
        probe.stop()
        report = {
            "conversations": args.conversations, "messages": args.conversations * args.messages, "file_mb": round(export.stat().st_size / 2**20, 1),
            "import_s": round(took, 2), "longest_own_stall_ms": round(probe.longest_own_ms, 1), "longest_wall_stall_ms": round(probe.longest_ms, 1),
            "window_writes": len(writes), "window_writes_refused": len(refused), "longest_window_write_ms": round(max(writes, default=0) * 1000, 1),
            "cancel_to_end_s": round(started + took - cancelled_at[0], 2) if cancelled_at else None,
            "summary": command.last_message,
        }
        window.shutdown()
        QCoreApplication.processEvents()
    publish(report, args.json)


if __name__ == "__main__":
    main()
