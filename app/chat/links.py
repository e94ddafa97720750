"""Which links in a reply open with a click.

A reply is text a model wrote, and a model can be led to write anything: a
`file:` link, or a custom scheme that hands its URL to another program, must
not run with one click. Web and mail links open in the user's browser or mail
program; any other link is shown (its full target), not opened.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from app.ui.language import Context

OPENABLE_SCHEMES = frozenset({"http", "https", "mailto"})


def opens(url: str) -> bool:
    try:
        return urlsplit(url).scheme.lower() in OPENABLE_SCHEMES
    except ValueError:
        return False


Links = Context("Links")


def not_opened(url: str) -> str:
    return Links.tr("Not opened: {url}\nOnly http, https and mailto links in a reply open.").format(url=url)
