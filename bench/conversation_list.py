"""How long the sidebar takes to show a list of many conversations, and to move one to the top.

Fills the window's conversation list model (behind the sidebar's filter proxy, in a shown list view with
uniform row sizes, as the sidebar has) with --rows conversations, --rounds times, and after each load moves
the middle one to the top as a new message would. Reports the medians, in milliseconds, of the load (the
model's reset until the view has laid it out) and of the move.

    .venv/bin/python bench/conversation_list.py [--rows 2000 --rows 20000] [--rounds 7]

Prints one JSON object: {"rows": {"2000": {"load_ms": ..., "move_to_top_ms": ...}, ...}}.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from report import publish  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, action="append", help="list sizes (default 2000 and 20000)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    from PySide6.QtWidgets import QApplication, QListView

    from app.chat.conversation_model import ConversationFilterModel, ConversationListModel
    from app.storage.store import Conversation

    app = QApplication.instance() or QApplication([])
    figures = {}
    for n in args.rows or [2000, 20000]:
        conversations = [Conversation(id=f"c{i}", title=f"Conversation number {i}", created_at=float(i), updated_at=float(n - i)) for i in range(n)]
        source = ConversationListModel()
        proxy = ConversationFilterModel(source)
        view = QListView()
        view.setUniformItemSizes(True)
        view.setModel(proxy)
        view.resize(240, 800)
        view.show()
        app.processEvents()
        loads, moves = [], []
        for r in range(args.rounds):
            started = time.perf_counter()
            source.set_conversations(conversations)
            app.processEvents()
            loads.append(time.perf_counter() - started)
            touched = dataclasses.replace(conversations[n // 2], updated_at=n + 10.0 + r)
            started = time.perf_counter()
            source.upsert(touched)
            app.processEvents()
            moves.append(time.perf_counter() - started)
            if proxy.index(0, 0).data() != touched.title:
                raise SystemExit("the touched conversation is not at the top")
        figures[str(n)] = {"load_ms": round(statistics.median(loads) * 1000, 2), "move_to_top_ms": round(statistics.median(moves) * 1000, 2)}
        view.deleteLater()
    publish({"rows": figures, "rounds": args.rounds}, args.json)


if __name__ == "__main__":
    main()
