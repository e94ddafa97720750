"""Light and dark palettes on the Fusion style, following the OS colour scheme unless told otherwise.

LOKAL_COLOR_SCHEME=light|dark forces one (the screenshots use it).
"""

from __future__ import annotations

import os

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

ACCENT = QColor("#2f6fde")


def is_dark(palette: QPalette | None = None) -> bool:
    palette = palette or QApplication.palette()
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def _wanted_scheme() -> str:
    forced = os.environ.get("LOKAL_COLOR_SCHEME", "").lower()
    if forced in ("light", "dark"):
        return forced
    scheme = QGuiApplication.styleHints().colorScheme()
    return "dark" if scheme == Qt.ColorScheme.Dark else "light"


def palette_for(scheme: str) -> QPalette:
    p = QPalette()
    if scheme == "dark":
        colors = {
            QPalette.ColorRole.Window: "#1f2023", QPalette.ColorRole.WindowText: "#e8e8ea",
            QPalette.ColorRole.Base: "#17181a", QPalette.ColorRole.AlternateBase: "#26272b",
            QPalette.ColorRole.Text: "#e8e8ea", QPalette.ColorRole.Button: "#2b2c30",
            QPalette.ColorRole.ButtonText: "#e8e8ea", QPalette.ColorRole.ToolTipBase: "#2b2c30",
            QPalette.ColorRole.ToolTipText: "#e8e8ea", QPalette.ColorRole.PlaceholderText: "#8b8d93",
            QPalette.ColorRole.Mid: "#3a3b40", QPalette.ColorRole.Dark: "#111214",
            QPalette.ColorRole.Midlight: "#34353a", QPalette.ColorRole.Light: "#3d3e44",
            QPalette.ColorRole.BrightText: "#ffffff", QPalette.ColorRole.Link: "#7fb0ff",
            QPalette.ColorRole.Highlight: "#3d7be8", QPalette.ColorRole.HighlightedText: "#ffffff",
        }
        disabled = "#6b6d73"
    else:
        colors = {
            QPalette.ColorRole.Window: "#f3f3f5", QPalette.ColorRole.WindowText: "#1d1d1f",
            QPalette.ColorRole.Base: "#ffffff", QPalette.ColorRole.AlternateBase: "#f6f6f8",
            QPalette.ColorRole.Text: "#1d1d1f", QPalette.ColorRole.Button: "#fbfbfc",
            QPalette.ColorRole.ButtonText: "#1d1d1f", QPalette.ColorRole.ToolTipBase: "#ffffff",
            QPalette.ColorRole.ToolTipText: "#1d1d1f", QPalette.ColorRole.PlaceholderText: "#8a8a8e",
            QPalette.ColorRole.Mid: "#d4d4d8", QPalette.ColorRole.Dark: "#a0a0a5",
            QPalette.ColorRole.Midlight: "#e6e6ea", QPalette.ColorRole.Light: "#ffffff",
            QPalette.ColorRole.BrightText: "#000000", QPalette.ColorRole.Link: "#1f5fcf",
            QPalette.ColorRole.Highlight: ACCENT.name(), QPalette.ColorRole.HighlightedText: "#ffffff",
        }
        disabled = "#a4a4a8"
    for role, color in colors.items():
        p.setColor(role, QColor(color))
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor(disabled))
    return p


def apply(app: QApplication) -> None:
    app.setStyle("Fusion")
    _apply_scheme(app)
    app.styleHints().colorSchemeChanged.connect(lambda _scheme: _apply_scheme(app))


def _apply_scheme(app: QApplication) -> None:
    apply_scheme(app, _wanted_scheme())


def apply_scheme(app: QApplication, scheme: str) -> None:
    """The palette, then the style sheet; a widget that draws in the scheme's colours itself (a code block) redraws
    on the PaletteChange that restyling sends it."""
    app.setPalette(palette_for(scheme))
    app.setStyleSheet(stylesheet(scheme == "dark"))


def code_background(dark: bool) -> str:
    """Under a code block's highlighted text (app/chat/highlight.py: monokai when dark). In the style sheet, not a sheet
    per block: a widget's own sheet restyles it and its children apart from the rest, 71 blocks of a long reply each."""
    return "#272822" if dark else "#f6f8fa"


def stylesheet(dark: bool) -> str:
    bubble_user = "#2a3b5c" if dark else "#e7effd"
    border = "#34353a" if dark else "#e1e1e5"
    hint = "#8b8d93" if dark else "#6e6e73"
    sidebar = "#1a1b1e" if dark else "#ebebee"
    warn_bg, warn_fg = ("#4a3312", "#ffd9a0") if dark else ("#fff4e0", "#7a4a00")
    return f"""
    QMenu {{ padding: 4px 0px; }}
    AutoHeightBrowser {{ background: transparent; }}  /* app/chat's text views, by their Python class: once here, not a sheet per view */
    #sidebar {{ background: {sidebar}; border-right: 1px solid {border}; }}
    #sidebar QListView {{ background: transparent; border: none; padding: 4px; }}
    #sidebar QListView::item {{ padding: 7px 8px; border-radius: 6px; }}
    #sidebar QListView::item:selected {{ background: palette(highlight); color: palette(highlighted-text); }}
    #chatScroll, #chatCanvas {{ background: palette(base); border: none; }}
    #userBubble {{ background: {bubble_user}; border-radius: 12px; }}
    #assistantBubble {{ background: transparent; }}
    #speaker {{ font-weight: 600; }}
    #stateBadge {{ color: {warn_fg}; background: {warn_bg}; border-radius: 6px; padding: 1px 6px; }}
    #hint, #metricsHint, #metricsCaption, #metricsName {{ color: {hint}; }}
    #messageMeter {{ color: {hint}; }}
    #messageMeter[warns="true"] {{ color: {warn_fg}; background: {warn_bg}; border-radius: 6px; padding: 2px 6px; }}
    #metricsSection {{ font-weight: 600; }}
    #codeBlock {{ background: {code_background(dark)}; border: 1px solid {border}; border-radius: 8px; }}
    QScrollBar#slimScroll:horizontal {{ height: 12px; background: transparent; margin: 0px 8px 4px 8px; }}
    QScrollBar#slimScroll:vertical {{ width: 12px; background: transparent; margin: 6px 2px 6px 0px; }}
    QScrollBar#slimScroll::handle {{ background: {hint}; border-radius: 3px; }}
    QScrollBar#slimScroll::handle:horizontal {{ min-width: 32px; margin: 1px 0px; }}
    QScrollBar#slimScroll::handle:vertical {{ min-height: 32px; margin: 0px 3px; }}
    QScrollBar#slimScroll::add-line, QScrollBar#slimScroll::sub-line {{ width: 0px; height: 0px; border: none; }}
    QScrollBar#slimScroll::add-page, QScrollBar#slimScroll::sub-page {{ background: none; }}
    #composerFrame {{ background: palette(base); border: 1px solid {border}; border-radius: 12px; }}
    #composer {{ background: transparent; border: none; }}
    #banner {{ background: {warn_bg}; color: {warn_fg}; border-bottom: 1px solid {border}; }}
    #banner QLabel {{ color: {warn_fg}; }}
    #metricsPanel {{ background: palette(window); border-left: 1px solid {border}; }}
    #topBar {{ border-bottom: 1px solid {border}; background: palette(base); }}
    #title {{ font-weight: 600; font-size: 11pt; }}
    QToolButton#messageAction {{ border: none; padding: 2px; border-radius: 4px; }}
    QToolButton#messageAction:hover {{ background: {border}; }}
    QToolButton#thinkingToggle {{ border: none; color: {hint}; padding: 2px 4px; border-radius: 4px; }}
    QToolButton#thinkingToggle:hover {{ background: {border}; }}
    QToolButton#thinkingToggle:checked {{ background: transparent; }}
    QFrame#thinkingBody {{ border: none; border-left: 2px solid {hint}; margin-left: 6px; padding-left: 8px; }}
    #thinkingBody QTextBrowser {{ color: {hint}; }}
    QToolButton#foldToggle {{ border: none; color: palette(link); padding: 2px 4px; border-radius: 4px; }}
    QToolButton#foldToggle:hover {{ background: {border}; }}
    QPlainTextEdit#wholeMessage {{ background: transparent; border: 1px solid {border}; border-radius: 6px; }}
    QFrame#welcomeAdvice {{ background: {warn_bg}; border-radius: 8px; }}
    #welcomeAdvice QLabel {{ color: {warn_fg}; }}
    QPushButton#welcomeExample {{ border: 1px solid {border}; border-radius: 8px; background: palette(base); }}
    QPushButton#welcomeExample:hover {{ background: {bubble_user}; }}
    """
