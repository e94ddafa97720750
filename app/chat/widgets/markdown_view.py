"""A message body: prose through Qt's Markdown renderer, fenced code in highlighted blocks with a copy button.

While a reply streams only the segments whose text changed are set again,
which is almost always just the last one.

A reply is text a model wrote, so it is rendered as inert text (issue #27):
raw HTML in it is shown as typed, never interpreted (`<img>`, `<a href=file:…>`,
`<script>`); an image it names is never fetched, from disk or the network (on
Windows `\\\\host\\share\\a.png` would go out over SMB with the user's
credentials, and `/dev/zero` would hang the window each time the conversation
opens), but shown as the words "[image: …]"; a link opens only when clicked,
and only with a scheme app/chat/links.py allows.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QCursor, QDesktopServices, QGuiApplication, QImage, QResizeEvent, QTextCharFormat, QTextCursor, QTextDocument, QTextOption, QTextTable,
)
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSizePolicy, QTextBrowser, QToolButton, QToolTip, QVBoxLayout, QWidget

from app.chat import highlight, links, markdown
from app.chat.markdown import PARAGRAPH_MARK
from app.ui import icons, theme
from app.ui.accessibility import described, discard


# GitHub's dialect (tables, strikethrough, task lists, autolinks) without its raw HTML: `<b>` is shown as typed.
REPLY_MARKDOWN = QTextDocument.MarkdownFeature.MarkdownDialectGitHub | QTextDocument.MarkdownFeature.MarkdownNoHTML
DOCUMENT_MARGIN = 2  # around a text view's text
PART_SPACING = 8  # between a message's parts: its prose views and code blocks
VIEW_SLACK = 2  # a text view is this much taller than its text (AutoHeightBrowser._text_height)
PARAGRAPH_GAP = PART_SPACING + 2 * DOCUMENT_MARGIN + VIEW_SLACK  # between two paragraphs, in one view or in two


class AutoHeightBrowser(QTextBrowser):
    """A read-only text view as tall as its text: the chat's scroll area scrolls, not each message.

    A clicked link opens only if its scheme is http, https or mailto (app/chat/links.py); any other is
    shown in a tooltip, and `sig_link_refused` says which. The browser never follows a link itself (it
    would load a `file:` URL into the view), never interprets HTML in Markdown (REPLY_MARKDOWN), and never
    fetches a resource (loadResource): an image becomes the words "[image: …]".
    """

    sig_link_refused = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.anchorClicked.connect(self._on_anchor_clicked)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        bar = self.horizontalScrollBar()
        bar.setObjectName("slimScroll")  # slim, where a code line or a table is wider (app/ui/theme.py)
        # The scroll area polished its bar as it made it, before it had this name: styled again, it takes the slim rule
        # (a view made without a parent was restyled whole when the layout adopted it, at a cost per widget)
        bar.style().unpolish(bar)
        bar.style().polish(bar)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.viewport().setAutoFillBackground(False)
        self.document().setDocumentMargin(DOCUMENT_MARGIN)
        self.document().documentLayout().documentSizeChanged.connect(self._fit)

    def setMarkdown(self, markdown: str) -> None:
        self.document().setMarkdown(markdown, REPLY_MARKDOWN)
        if "![" in markdown:  # Markdown's only image syntax (inline or by reference); HTML is not interpreted
            self._images_to_text()
        self._keep_table_words_whole()
        if PARAGRAPH_MARK in markdown:
            self._mark_to_gap()

    def _mark_to_gap(self) -> None:
        """Each PARAGRAPH_MARK paragraph (app/chat/markdown.grouped) taken out, and the paragraph after it set as far
        below the one before as in a view of its own (PARAGRAPH_GAP): a reply reads the same grouped or not. Where
        two margins meet, the larger is the gap."""
        document = self.document()
        cursor = QTextCursor(document)
        cursor.beginEditBlock()
        block = document.begin()
        while block.isValid():
            following = block.next()
            if block.text() == PARAGRAPH_MARK and block.previous().isValid() and following.isValid():
                spaced = following.blockFormat()
                spaced.setTopMargin(max(spaced.topMargin(), PARAGRAPH_GAP))
                cursor.setPosition(following.position())
                cursor.setBlockFormat(spaced)
                before = block.previous()
                cursor.setPosition(before.position() + before.length() - 1)  # the end of the paragraph before: it keeps its format
                cursor.setPosition(block.position() + block.length() - 1, QTextCursor.MoveMode.KeepAnchor)
                cursor.removeSelectedText()
            block = following
        cursor.endEditBlock()

    def _keep_table_words_whole(self) -> None:
        """A table breaks its cells at spaces only, and scrolls sideways where it is wider than the view. Broken
        anywhere (as prose is, so that a long address still fits), a table of many columns split its headings
        mid-word ("Parameter/s")."""
        table = any(isinstance(frame, QTextTable) for frame in self.document().rootFrame().childFrames())
        wrap = QTextOption.WrapMode.WordWrap if table else QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere
        if self.wordWrapMode() != wrap:
            self.setWordWrapMode(wrap)
            self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded if table else Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        if table:  # setMarkdown leaves the view's cursor at the end, and the view scrolled to its last column
            self.moveCursor(QTextCursor.MoveOperation.Start)

    def loadResource(self, kind: int, name: QUrl | str) -> object:
        """Nothing from disk or the network: an empty image, an empty text.

        Qt's own fallback reads the file (or decodes the data: URL) when this answers nothing, so it
        answers something: the view's only content is what setMarkdown and setHtml put in.
        """
        if kind == QTextDocument.ResourceType.ImageResource.value:
            return QImage()
        return ""

    def _images_to_text(self) -> None:
        """Each image the Markdown names, replaced by its address as plain text, so the reader sees what was there."""
        document = self.document()
        images = []
        block = document.begin()
        while block.isValid():
            it = block.begin()
            while not it.atEnd():
                fragment = it.fragment()
                if fragment.charFormat().isImageFormat():
                    images.append((fragment.position(), fragment.length(), fragment.charFormat().toImageFormat().name()))
                it += 1
            block = block.next()
        for position, length, name in reversed(images):  # from the end, so earlier positions stay valid
            cursor = QTextCursor(document)
            cursor.setPosition(position)
            cursor.setPosition(position + length, QTextCursor.MoveMode.KeepAnchor)
            cursor.insertText(self.tr("[image: {address}]").format(address=name), QTextCharFormat())

    def _on_anchor_clicked(self, url: QUrl) -> None:
        target = url.toString()
        if links.opens(target):
            QDesktopServices.openUrl(url)
            return
        QToolTip.showText(QCursor.pos(), links.not_opened(target), self)
        self.sig_link_refused.emit(target)

    def _fit(self, *_args: object) -> None:
        height = self._text_height()
        if height != self.height():
            self.setFixedHeight(height)

    def _text_height(self) -> int:
        """The text's height, and a horizontal scroll bar's under it where one shows (a code block's long line, a wide table)."""
        height = int(self.document().size().height()) + VIEW_SLACK
        if self.horizontalScrollBarPolicy() != Qt.ScrollBarPolicy.ScrollBarAlwaysOff and self.document().size().width() > self.viewport().width():
            height += self.horizontalScrollBar().sizeHint().height()
        return height

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        width = self.viewport().width()
        if width != self.document().textWidth():  # setTextWidth lays the whole text out again, even at the same width
            self.document().setTextWidth(width)
        self._fit()

    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), self._text_height())


class CodeBlock(QFrame):
    sig_copied = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("codeBlock")
        self.code = ""
        self._labelled: str | None = None  # the language the header names
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        # The header, a row of the block's own layout: a widget of its own cost a widget per block, and drew nothing
        row = QHBoxLayout()
        row.setContentsMargins(10, 4, 4, 4)
        self.language_label = QLabel(self)
        self.language_label.setObjectName("hint")
        self.copy_button = QToolButton(self)
        self.copy_button.setObjectName("messageAction")
        self.copy_button.setIcon(icons.icon("copy"))
        self.copy_button.setText(self.tr("Copy"))
        self.copy_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.copy_button.setToolTip(self.tr("Copy this code"))
        self.copy_button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        described(self.copy_button, self.tr("Copy code"), self.tr("Copy this code to the clipboard"))
        self.copy_button.clicked.connect(self._on_copy)
        row.addWidget(self.language_label)
        row.addStretch(1)
        row.addWidget(self.copy_button)
        layout.addLayout(row)
        self.view = AutoHeightBrowser(self)
        # Code lines do not wrap (app/chat/highlight.py): a line wider than the block scrolls sideways
        self.view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.view.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.view.document().setDocumentMargin(10)
        self.highlighted = highlight.HighlightedCode(self.view.document())
        layout.addWidget(self.view)

    def set_code(self, code: str, language: str, growing: bool = False) -> None:
        """`growing`: a streaming reply's open block, re-lexed from its last settled line (app/chat/highlight.py)."""
        dark = theme.is_dark()
        if language != self._labelled:
            self._labelled = language
            self.language_label.setText(language or self.tr("code"))
            self.view.setAccessibleDescription(self.tr("Code ({language})").format(language=language) if language else self.tr("Code"))
        self.code = code
        self.highlighted.show(code, language, dark, growing)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        # The OS switched between light and dark (app/ui/theme.apply_scheme): the code takes the other scheme's colours
        if event.type() == QEvent.Type.PaletteChange and theme.is_dark() != self.highlighted.dark:
            self.set_code(self.code, self.highlighted.language, growing=not self.highlighted.exact)

    def _on_copy(self) -> None:
        QGuiApplication.clipboard().setText(self.code)
        self.copy_button.setText(self.tr("Copied"))
        QTimer.singleShot(1500, self.copy_button, lambda: self.copy_button.setText(self.tr("Copy")))
        self.sig_copied.emit(self.code)


class MarkdownView(QWidget):
    sig_link_refused = Signal(str)  # a link in the text that was clicked and not opened (see AutoHeightBrowser)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.text = ""
        self._streaming = False
        self._streamed = False  # it has shown text still streaming
        self._name = ""  # what a screen reader calls each part ("Your message", "Message from Assistant")
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(PART_SPACING)
        self._parts: list[tuple[str, CodeBlock | AutoHeightBrowser, str]] = []  # kind, widget, the text it shows

    def set_accessible_name(self, name: str) -> None:
        if name != self._name:
            self._name = name
            for _kind, widget, _text in self._parts:
                self._name_part(widget)

    def _name_part(self, widget: QWidget) -> None:
        if isinstance(widget, CodeBlock):
            widget.view.setAccessibleName(self.tr("Code in {name}").format(name=self._name))
        else:
            widget.setAccessibleName(self._name)
            widget.setAccessibleDescription(self.tr("Text of the message; links open in your browser"))

    @property
    def code_blocks(self) -> list[CodeBlock]:
        return [w for _kind, w, _t in self._parts if isinstance(w, CodeBlock)]

    def set_markdown(self, text: str, streaming: bool = False) -> None:
        """`streaming`: more text is coming, so an open code block only grows (CodeBlock.set_code)."""
        if (text, streaming) == (self.text, self._streaming):
            return
        self.text, self._streaming = text, streaming
        # A view that streamed keeps a widget per paragraph when the reply ends: grouping then would make every widget
        # again at once, for the same look. Opened again later, the reply is grouped.
        self._streamed = self._streamed or streaming
        segments = markdown.split(text) if self._streamed else markdown.grouped(markdown.split(text))
        for i, segment in enumerate(segments):
            growing = streaming and segment.kind == "code" and not segment.closed
            key = segment.text + "\0" + segment.language + ("\0growing" if growing else "")
            if i < len(self._parts) and self._parts[i][0] == segment.kind:
                kind, widget, shown = self._parts[i]
                if shown == key:
                    continue
            else:
                for _k, old, _s in self._parts[i:]:
                    discard(old)
                del self._parts[i:]
                if segment.kind == "code":
                    widget = CodeBlock(self)
                else:
                    browser = widget = AutoHeightBrowser(self)
                    browser.sig_link_refused.connect(self.sig_link_refused)
                self._name_part(widget)
                self._layout.addWidget(widget)
                self._parts.append((segment.kind, widget, ""))
            if isinstance(widget, CodeBlock):
                widget.set_code(segment.text, segment.language, growing)
            else:
                widget.setMarkdown(segment.text)  # AutoHeightBrowser's: no HTML, nothing fetched
            self._parts[i] = (segment.kind, widget, key)
        for _k, old, _s in self._parts[len(segments):]:
            discard(old)
        del self._parts[len(segments):]
