"""Render docs/screenshots/search.png: Ctrl+K over a few seeded conversations, its hits highlighted.

    .venv/bin/python scripts/search_screenshot.py

Offscreen, in a scratch data folder; no model is loaded (search reads the conversations database only).
The conversations are seeded text; the hits, snippets and highlighting are the real search's.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

QUERY = "csv"
SEEDED = [
    ("Summing a column of sales", [
        ("user", "How do I read a CSV file in Python and sum one column?"),
        ("assistant", "Use the standard library's csv module: open the file with newline=\"\", read rows with csv.DictReader, and add up float(row[\"amount\"])."),
    ]),
    ("Cleaning up the bank export", [
        ("user", "My bank's export uses semicolons and commas as decimal marks. How do I load it?"),
        ("assistant", "Pass sep=\";\" and decimal=\",\" to pandas.read_csv, then check the dtypes: a CSV export often keeps dates as text."),
    ]),
    ("Regex for ISO dates", [
        ("user", "A regex for dates like 2024-09-17?"),
        ("assistant", "^\\d{4}-\\d{2}-\\d{2}$ matches the shape; parse it with datetime.date.fromisoformat to check it is a real date."),
    ]),
    ("Spreadsheet or database?", [
        ("user", "When should I move from a spreadsheet to SQLite?"),
        ("assistant", "Once several programs write the data, or it outgrows one sheet. SQLite's .import command reads a CSV straight into a table."),
    ]),
    ("Planning the family trip to Lisbon", [
        ("user", "Three days in Lisbon in September: what should we not miss?"),
        ("assistant", "Alfama on foot, the tram 28 early in the morning, and a day trip to Sintra."),
    ]),
]


def main() -> int:
    scratch = Path(tempfile.mkdtemp(prefix="lokal-search-shot-"))
    for name in ("LOKAL_DATA_DIR", "LOKAL_CONFIG_DIR", "LOKAL_CACHE_DIR", "LOKAL_LOG_DIR"):  # never the user's own folders
        os.environ[name] = str(scratch / name.lower())
    os.environ["LOKAL_COLOR_SCHEME"] = "light"
    os.environ["LOKAL_LANGUAGE"] = "en"
    from PySide6.QtWidgets import QApplication

    from app.main import create_main_window
    from app.ui import theme
    from screenshots import OUT, wait, with_popup

    app = QApplication.instance() or QApplication([])
    theme.apply(app)
    window = create_main_window(store_path=scratch / "c.sqlite3", autoload=False)
    last = None
    for title, messages in SEEDED:
        conv = window.chat.new_conversation(title)
        for role, text in messages:
            window.store.add_message(conv.id, role, text)
        last = conv
    window.chat.current = None
    window.chat.open(last.id if last else None)
    window.resize(1360, 860)
    window.show()
    dialog = window.features["search"].search_all()
    dialog.resize(660, 300)
    dialog.box.setText(QUERY)
    dialog.search_now()
    if not wait(app, lambda: dialog.results.rowCount() >= 3, 30):
        raise SystemExit("the search found nothing")
    dialog.list.setCurrentIndex(dialog.results.index(0))
    app.processEvents()
    OUT.mkdir(parents=True, exist_ok=True)
    target = OUT / "search.png"
    at = window.rect().center() - dialog.rect().center()
    with_popup(window, dialog, at).save(str(target))
    print(target.relative_to(ROOT))
    window.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
