"""How long the window's thread takes to show a conversation whose first message is a pasted log of --mb MB.

Side by side, in one run: the chat view as it is (the message folded to its first and last lines,
app/chat/long_text.py), and the message's text formatted whole as Markdown, as every message was before
(a MarkdownView given the text). Each is timed from the model's reset (or the set_markdown call) until the
view has laid it out; then Show all, which puts the whole text in a box that scrolls. Offscreen, the real
widgets.

    .venv/bin/python bench/long_message.py [--mb 2] [--rounds 5] [--json FILE]

Prints one JSON object: the medians in milliseconds, and formatted whole over folded.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    from PySide6.QtWidgets import QApplication

    from app.chat.message_model import MessageListModel
    from app.chat.widgets.markdown_view import MarkdownView
    from app.chat.widgets.message_view import ChatView
    from app.storage.store import Message

    app = QApplication.instance() or QApplication([])
    log = pasted_log(args.mb)
    messages = [Message(1, "c", 1, "user", log), Message(2, "c", 2, "assistant", "The pool runs out of connections at 05:40.")]
    model = MessageListModel()
    view = ChatView(model)
    view.resize(900, 800)
    view.show()
    whole = MarkdownView()
    whole.resize(860, 800)
    whole.show()
    app.processEvents()
    folded_ms, show_all_ms, whole_ms = [], [], []
    for _ in range(args.rounds):
        model.set_messages([])
        app.processEvents()
        started = time.perf_counter()
        model.set_messages(messages)
        app.processEvents()
        folded_ms.append((time.perf_counter() - started) * 1000)
        long = view.widgets[0].long
        if long is None or long.folded is None:
            raise SystemExit("the message did not fold")
        started = time.perf_counter()
        long.toggle.click()
        app.processEvents()
        show_all_ms.append((time.perf_counter() - started) * 1000)
        if long.whole.toPlainText() != log:
            raise SystemExit("Show all did not show the whole text")
        whole.set_markdown("")
        app.processEvents()
        started = time.perf_counter()
        whole.set_markdown(log)
        app.processEvents()
        whole_ms.append((time.perf_counter() - started) * 1000)
    folded, formatted = statistics.median(folded_ms), statistics.median(whole_ms)
    publish({
        "mb": args.mb, "chars": len(log), "lines": log.count("\n") + 1, "rounds": args.rounds,
        "open_folded_ms": round(folded, 1), "show_all_ms": round(statistics.median(show_all_ms), 1),
        "formatted_whole_ms": round(formatted, 1), "formatted_whole_over_folded": round(formatted / folded, 1),
    }, args.json)


if __name__ == "__main__":
    main()
