"""A reply's citations and a message's chips as widgets, offscreen: what they say, and the keyboard."""

from __future__ import annotations

from PySide6.QtCore import Qt

from app.attachments.widgets.chips import MessageAttachments
from app.attachments.widgets.citations import Citations
from app.storage.attachments import StoredAttachment, StoredCitation

CITED = [StoredCitation("a" * 64, "manual.pdf", 2, "page 3", "Hold the button for five seconds."), StoredCitation("b" * 64, "main.c", 0, "lines 40–62", "int main(void)")]


def test_citations_name_the_source_and_place_and_open_to_the_cited_text_from_the_keyboard(qtbot, english):
    view = Citations()
    qtbot.addWidget(view)
    view.show_citations(CITED)
    view.show()
    assert [item.button.text() for item in view.items] == ["manual.pdf — page 3", "main.c — lines 40–62"]
    first = view.items[0]
    assert not first.text.isVisible() and first.button.focusPolicy() & Qt.FocusPolicy.TabFocus
    first.button.setFocus()
    qtbot.keyClick(first.button, Qt.Key.Key_Return)
    assert first.expanded and first.text.isVisible() and first.text.text() == "Hold the button for five seconds."
    qtbot.keyClick(first.button, Qt.Key.Key_Space)
    assert not first.expanded and not first.text.isVisible()
    view.show_citations([])
    assert view.isHidden()


def test_a_document_chip_in_a_message_says_its_size_and_a_missing_picture_falls_back_to_its_thumbnail(qtbot, english):
    from app.attachments import pictures
    from PySide6.QtGui import QColor, QImage

    image = QImage(300, 200, QImage.Format.Format_RGB32)
    image.fill(QColor("navy"))
    thumb = pictures.thumbnail(image)
    row = MessageAttachments(lambda _id: None)  # the picture's bytes are gone from the store
    qtbot.addWidget(row)
    row.show_attachments([StoredAttachment("a" * 64, "document", "spec.md", tokens=812, fits_whole=True), StoredAttachment("b" * 64, "image", "plot.png", thumbnail=thumb)])
    chip, = [p for p in row.parts if p not in row.thumbnails()]
    assert chip.label.text() == "spec.md · 812 tokens" and "whole document" in chip.toolTip()
    viewer = row.thumbnails()[0].open_viewer()
    assert viewer.pixmap.width() == 160  # the thumbnail, at its own size: something is shown, and nothing fails
    viewer.close()
