"""How long the window's thread takes to show a conversation whose reply is long: one that mixes prose, lists,
code and tables, and one of prose only (a reasoning model's thinking, unfolded, reads like this).

The real chat view, offscreen, with the app's theme: the conversation set into its model until the view has laid
it out and painted it, median of --rounds, for each reply size in --kb. Runs in any tree (bench/paired.py across
trees: --figure 'mixed.*.open_ms' --figure 'prose.*.open_ms').

    .venv/bin/python bench/long_reply.py [--kb 10,40] [--rounds 5] [--json FILE]

Prints one JSON object: the medians in milliseconds, and the widgets each reply was shown with.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from long_message import median_ms  # noqa: E402
from report import publish  # noqa: E402

MIXED = """## Step {i}: reading the file

Use the standard library's `csv` module for step {i}:

1. Open the file with `newline=""`.
2. Read rows as dictionaries with `csv.DictReader`.
3. Convert the column to numbers and add them up.

```python
import csv

with open("sales_{i}.csv", newline="") as f:
    total = sum(float(row["amount"]) for row in csv.DictReader(f))
```

| Approach | Good for |
|---|---|
| `csv` module | small files, no dependencies |
| `pandas.read_csv` | large files, further analysis |

Check the result against the ledger before you go on to step {i}."""

PROSE = """Wait, step {i} needs another look. The sum of the first column came to 4,817, but the ledger says 4,871.

So either a row was read twice or two digits were swapped when the ledger was written. Let me check the rows again.

Looking at row {i}: the amount is 12.50 and it appears once. That is fine, so the difference is elsewhere."""


SETTLE_TURNS = 20  # turns of the event loop an opened reply is given to settle: 8 were enough for any here


def reply(kind: str, chars: int) -> str:
    template = MIXED if kind == "mixed" else PROSE
    parts: list[str] = []
    while len("\n\n".join(parts)) < chars:
        parts.append(template.format(i=len(parts)))
    return "\n\n".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", default="10,40", help="reply sizes in thousands of characters, comma-separated")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    from PySide6.QtCore import QCoreApplication, QEvent
    from PySide6.QtWidgets import QApplication, QWidget

    from app.chat.message_model import MessageListModel
    from app.chat.widgets.message_view import ChatView
    from app.storage.store import Message
    from app.ui import theme

    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    theme.apply(app)
    model = MessageListModel()
    view = ChatView(model)
    view.resize(900, 800)
    view.show()
    app.processEvents()

    def emptied() -> None:
        model.set_messages([])
        app.processEvents()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)  # what the event loop deletes between turns

    report: dict[str, object] = {"rounds": args.rounds}
    for kind in ("mixed", "prose"):
        sizes: dict[str, object] = {}
        for kb in (float(k) for k in args.kb.split(",")):
            text = reply(kind, int(kb * 1000))
            messages = [Message(1, "c", 1, "user", "Sum the amounts, step by step."), Message(2, "c", 2, "assistant", text)]

            def opened() -> None:
                model.set_messages(messages)
                # Until laid out: a layout takes its children's sizes a turn after they change, a level a turn, and
                # the scroll bar that then shows narrows it all. After one turn, a prose reply had still to be laid
                # out again at the width the bar leaves (12 ms more, not counted). An idle turn costs microseconds.
                for _turn in range(SETTLE_TURNS):
                    app.processEvents()
                view.viewport().repaint()
                app.processEvents()

            open_ms = median_ms(args.rounds, emptied, opened)
            widgets = len(view.widgets[-1].body.findChildren(QWidget))
            sizes[f"{kb:g}kb"] = {"chars": len(text), "open_ms": open_ms, "widgets": widgets}
        report[kind] = sizes
    publish(report, args.json)


if __name__ == "__main__":
    main()
