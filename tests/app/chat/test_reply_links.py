"""Links in a reply (model output, so untrusted): a click opens http, https and mailto; any other scheme
is shown, not opened, and the view never loads a `file:` URL into itself. The real widget, real clicks."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QObject, Qt, QUrl, Slot
from PySide6.QtGui import QDesktopServices, QTextCursor
from PySide6.QtWidgets import QToolTip

from app.chat.widgets.markdown_view import AutoHeightBrowser, MarkdownView

LINKS = {
    "web": "https://example.com/page",
    "plain web": "http://example.com/",
    "mail": "mailto:someone@example.com",
    "local file": "file:///etc/passwd",
    "custom scheme": "lokal-evil://run?payload=1",
    "javascript": "javascript:alert(1)",
}
SCHEMES = ["https", "http", "mailto", "file", "lokal-evil", "javascript"]


class Opened(QObject):
    """Stands in for the browser and the mail program: QDesktopServices hands it what it would open."""

    def __init__(self):
        super().__init__()
        self.urls: list[str] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.urls.append(url.toString())


@pytest.fixture
def opened():
    catcher = Opened()
    for scheme in SCHEMES:
        QDesktopServices.setUrlHandler(scheme, catcher, "open")
    yield catcher
    for scheme in SCHEMES:
        QDesktopServices.unsetUrlHandler(scheme)


@pytest.fixture
def view(qtbot):
    widget = MarkdownView()
    qtbot.addWidget(widget)
    widget.resize(700, 400)
    widget.set_markdown("\n\n".join(f"[{name}]({url}) here." for name, url in LINKS.items()))
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def click_link(qtbot, view: MarkdownView, url: str) -> AutoHeightBrowser:
    """Click the middle of the link's text, where a person would."""
    for _kind, browser, _text in view._parts:
        block = browser.document().begin()
        while block.isValid():
            it = block.begin()
            while not it.atEnd():
                fragment = it.fragment()
                if fragment.charFormat().anchorHref() == url:
                    cursor = QTextCursor(browser.document())
                    cursor.setPosition(fragment.position() + fragment.length() // 2)
                    point = browser.cursorRect(cursor).center()
                    qtbot.mouseClick(browser.viewport(), Qt.MouseButton.LeftButton, pos=point)
                    return browser
                it += 1
            block = block.next()
    raise AssertionError(f"no link to {url} in the view")


def test_only_web_and_mail_links_open_the_others_are_shown_not_opened(qtbot, view, opened):
    refused = []
    view.sig_link_refused.connect(refused.append)
    for name in ("web", "plain web", "mail"):
        click_link(qtbot, view, LINKS[name])
        qtbot.waitUntil(lambda: opened.urls[-1:] == [LINKS[name]], timeout=2000)
    for name in ("local file", "custom scheme", "javascript"):
        url = LINKS[name]
        browser = click_link(qtbot, view, url)
        qtbot.waitUntil(lambda: refused[-1:] == [url], timeout=2000)
        assert url in QToolTip.text()  # the full target, for the person to see
        assert browser.source().isEmpty() and "here." in browser.toPlainText()  # nothing was loaded into the view
    assert opened.urls == [LINKS["web"], LINKS["plain web"], LINKS["mail"]]
