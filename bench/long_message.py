"""How long the window's thread takes to show a conversation whose first message is a pasted log of --mb MB.

The real chat view, offscreen: the conversation set into its model until the view has laid it out and painted
it (open_ms), median of --rounds. Run it in two trees with bench/paired.py to compare a change; in a tree where
long messages fold it also times Show all (the whole text in a box that scrolls), formatting FOLD_CHARS of the log
as Markdown (where a message starts to fold), and making a message's widgets against making the fold's own
(which a message makes only when it folds).

    .venv/bin/python bench/long_message.py [--mb 2] [--rounds 5] [--json FILE]
    .venv/bin/python bench/paired.py --baseline <older checkout> --rounds 3 --figure open_ms -- bench/long_message.py

Prints one JSON object: the medians in milliseconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from report import publish  # noqa: E402


def pasted_log(mb: float) -> str:
    lines, size, i = ["Here is our server log from this morning:"], 0, 0
    while size < mb * 1e6:
        line = f"2026-12-07 05:{i // 60 % 60:02d}:{i % 60:02d} INFO worker[{i % 8}] GET /api/v1/items/{i} 200 in {3 + i % 17} ms"
        lines.append(line)
        size += len(line) + 1
        i += 1
    return "\n".join(lines) + "\nWhy do the requests slow down after 05:40?"


def median_ms(rounds: int, prepare: Callable[[], Any], timed: Callable[[], Any]) -> float:
    times = []
    for _ in range(rounds):
        prepare()
        started = time.perf_counter()
        timed()
        times.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(times), 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    from PySide6.QtCore import QCoreApplication, QEvent
    from PySide6.QtWidgets import QApplication

    from app.chat.message_model import MessageListModel
    from app.chat.widgets.message_view import ChatView, MessageWidget
    from app.storage.store import Message

    app = QApplication.instance() or QApplication([])
    log = pasted_log(args.mb)
    messages = [Message(1, "c", 1, "user", log), Message(2, "c", 2, "assistant", "The pool runs out of connections at 05:40.")]
    model = MessageListModel()
    view = ChatView(model)
    view.resize(900, 800)
    view.show()
    app.processEvents()

    def settled() -> None:
        app.processEvents()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)  # what the event loop deletes between turns

    def opened() -> None:
        model.set_messages(messages)
        app.processEvents()
        view.viewport().repaint()
        app.processEvents()

    def emptied() -> None:
        model.set_messages([])
        settled()

    report: dict[str, Any] = {"mb": args.mb, "chars": len(log), "lines": log.count("\n") + 1, "rounds": args.rounds}
    report["open_ms"] = median_ms(args.rounds, emptied, opened)
    long = getattr(view.widgets[0], "long", None)
    if long is not None:  # a tree where long messages fold
        from app.chat.long_text import FOLD_CHARS
        from app.chat.widgets.long_message import LongMessage
        from app.chat.widgets.markdown_view import MarkdownView

        def folded() -> None:
            long.set_expanded(False)
            settled()

        def show_all() -> None:
            long.set_expanded(True)
            app.processEvents()
            if long.whole.toPlainText() != log:
                raise SystemExit("Show all did not show the whole text")

        formatted = MarkdownView()
        formatted.resize(860, 800)
        formatted.show()

        def cleared() -> None:
            formatted.set_markdown("")
            settled()

        def format_fold_chars() -> None:
            formatted.set_markdown(log[:FOLD_CHARS])
            app.processEvents()

        def make(kind: type) -> Callable[[], Any]:
            return lambda: [kind() for _ in range(100)]

        report["show_all_ms"] = median_ms(args.rounds, folded, show_all)
        report["format_fold_chars_ms"] = median_ms(args.rounds, cleared, format_fold_chars)
        report["make_message_widget_ms"] = round(median_ms(args.rounds, settled, make(MessageWidget)) / 100, 3)
        report["make_long_message_widget_ms"] = round(median_ms(args.rounds, settled, make(LongMessage)) / 100, 3)
    publish(report, args.json)


if __name__ == "__main__":
    main()
