"""The narrowest the main window can be made, with both side panels shown: with a first conversation's title and the
starter model's name, with four long-named files attached to it, and with a long title and a long model name; and
the chat column's width in a window 960 px wide. Then how much of a long title shows (its text's width, "…"
included) with a long model name beside it, the window made as narrow as it goes with the starter's name
(title_at_minimum_px: 812 px, or wider where these names widen the window).

A window snapped to one side of a 1920 px screen must fit in 960 px. The real window offscreen, no model loaded:
the names are set as the window sets them. Runs in any tree (bench/paired.py across trees).

    .venv/bin/python bench/window_width.py [--json FILE]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from report import publish  # noqa: E402

LONG_TITLE = "Planning the family trip to Lisbon in May: flights, a flat near Alfama, day trips to Sintra and Cascais"
FILES = ("quarterly-financial-report-2026-final-v3.md", "meeting-notes-board-of-directors-november.txt",
         "architecture-decision-record-0042-kv-cache.md", "customer-interview-transcripts-batch-7.txt")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    from PySide6.QtWidgets import QApplication

    from app.main import create_main_window

    app = QApplication.instance() or QApplication([])
    window = create_main_window(store_path=Path(tempfile.mkdtemp()) / "c.sqlite3", autoload=False)
    window.resize(1360, 860)
    window.show()

    def name_model(name: str) -> None:
        button = window.model_button
        button.set_model_name(name) if hasattr(button, "set_model_name") else button.setText(name)
        window.model_status.line.model_label.setText(f"{name}  ·  CPU")

    def narrowest() -> int:
        for _ in range(5):
            app.processEvents()
        return int(window.minimumSizeHint().width())

    report = {}
    conversation = window.chat.new_conversation("Summing a CSV column")
    name_model("SmolLM2 135M Instruct · Q4_1")
    report["first_conversation_px"] = narrowest()
    for name in FILES:
        window.attacher.pending.add(name, "document")  # as each chip shows while the runtime reads its file
    report["four_long_named_files_px"] = narrowest()
    window.attacher.pending.clear()
    window.chat.rename(conversation.id, LONG_TITLE)
    name_model("DeepSeek R1 Distill Qwen 32B Instruct Abliterated Uncensored Merge v2 · Q4_K_M")
    report["long_title_and_model_name_px"] = narrowest()
    name_model("SmolLM2 135M Instruct · Q4_1")
    window.resize(960, 860)  # snapped to half a 1920 px screen: how much of it the chat gets, the side panels at their usual widths
    for _ in range(5):
        app.processEvents()
    report["chat_at_half_screen_px"] = window.splitter.sizes()[1]
    name_model("DeepSeek R1 Distill Qwen 32B Instruct Abliterated Uncensored Merge v2 · Q4_K_M")
    window.resize(report["first_conversation_px"], 860)  # the most it shrinks to: these names may keep it wider
    for _ in range(5):
        app.processEvents()
    report["title_at_minimum_px"] = window.title.fontMetrics().horizontalAdvance(window.title.shown())
    window.shutdown()
    publish(report, args.json)


if __name__ == "__main__":
    main()
