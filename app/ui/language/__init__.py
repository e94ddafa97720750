"""The window's language: the OS locale, unless the user chose one in View ▸ Language.

Every user-visible string goes through Qt's translation system (self.tr, QCoreApplication.translate).
The catalogues are app/resources/i18n/lokal_<code>.ts (the sources, kept in git: edit them with
pyside6-linguist, refresh them with scripts/translations.py) compiled to lokal_<code>.qm by
scripts/dev.sh (pyside6-lrelease), so a plain `pip install .` and the installers carry them as
package data. English is the source language; lokal_en.qm holds only its plural forms ("1 token",
"2 tokens"), and qt_id.qm the few of Qt's own strings the window shows (OK, Cancel, Copy…), which Qt
does not ship in Indonesian.

LOKAL_LANGUAGE=en|id overrides both the OS and the saved choice (the tests and the screenshots use it).
The View ▸ Language menu, which keeps the choice and offers to open the window again in it, is
app/ui/language/menu.py.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator

log = logging.getLogger("lokal.language")

# The languages Lokal ships, by code, each named in itself (a menu of languages is read by people who may
# not read the current one).
LANGUAGES = {"en": "English", "id": "Bahasa Indonesia"}
SOURCE = "en"
SYSTEM = ""  # the saved choice that means "follow the OS"
STATE_KEY = "language"  # where the choice is kept (the store's state table)

_installed: list[QTranslator] = []


class Context:
    """A translation context for code that is not a QObject: `Metrics = Context("Metrics")`, then
    `Metrics.tr("Time to first token")` or `Metrics.tr("%Ln token(s)", None, n)`. pyside6-lupdate reads
    `Name.tr(...)` as context "Name", so the variable's name and the context's must be the same
    (tests/app/ui/test_translations.py checks it)."""

    def __init__(self, name: str):
        self.name = name

    def tr(self, text: str, disambiguation: str | None = None, n: int = -1) -> str:
        return QCoreApplication.translate(self.name, text, disambiguation, n)

_current = SOURCE


def i18n_dir() -> Path:
    return Path(__file__).resolve().parents[2] / "resources" / "i18n"


def catalogue(code: str) -> Path:
    return i18n_dir() / f"lokal_{code}.qm"


def missing_catalogues() -> list[Path]:
    """The compiled catalogues an installed Lokal must carry and cannot load (the self-test fails on any)."""
    wanted = [catalogue(code) for code in LANGUAGES] + [i18n_dir() / f"qt_{code}.qm" for code in LANGUAGES if code != SOURCE]
    return [path for path in wanted if not QTranslator().load(str(path))]


def system_language() -> str:
    """The first of the OS's preferred UI languages that Lokal ships; English when none is."""
    for name in QLocale.system().uiLanguages():
        code = name.replace("_", "-").split("-")[0].lower()
        if code in LANGUAGES:
            return code
    return SOURCE


def wanted(saved: str | None) -> str:
    forced = os.environ.get("LOKAL_LANGUAGE", "").strip().lower()
    if forced in LANGUAGES:
        return forced
    if saved in LANGUAGES:
        return saved
    return system_language()


def current() -> str:
    """The language the window's strings are in now."""
    return _current


def install(code: str) -> str:
    """Translate the application's strings into `code` from now on (widgets made later show it); returns
    the language in use, English when the catalogue is missing (said in the log, with how to build it)."""
    global _current
    app = QCoreApplication.instance()
    for translator in _installed:
        if app is not None:
            app.removeTranslator(translator)
    _installed.clear()
    used = code if code in LANGUAGES else SOURCE
    files = [catalogue(used)]
    if used != SOURCE:
        own_qt = i18n_dir() / f"qt_{used}.qm"
        files.append(own_qt if own_qt.exists() else Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)) / f"qtbase_{used}.qm")
    for path in files:
        translator = QTranslator()
        if not translator.load(str(path)):
            if path == catalogue(used):
                log.warning("no translation catalogue %s: build it with scripts/dev.sh (pyside6-lrelease)", path)
                if used != SOURCE:
                    return install(SOURCE)
            continue
        if app is not None:
            app.installTranslator(translator)
        _installed.append(translator)
    QLocale.setDefault(QLocale(used))
    _current = used
    return used
