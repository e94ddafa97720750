"""Lokal in Indonesian: every string of the window is translated, the catalogues are built, the window
follows the OS locale, and View ▸ Language overrides it (kept across starts)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from app.ui import language

ROOT = Path(__file__).resolve().parents[3]
I18N = ROOT / "app" / "resources" / "i18n"
PROBE = Path(__file__).with_name("language_probe.py")
PLACEHOLDER = re.compile(r"\{[a-z_]+\}|%L?n")


def messages(ts: Path) -> list[dict]:
    out = []
    for context in ET.parse(ts).getroot().iter("context"):
        name = context.find("name").text
        for message in context.iter("message"):
            translation = message.find("translation")
            forms = [f.text or "" for f in translation.iter("numerusform")] if message.get("numerus") == "yes" else [translation.text or ""]
            out.append({"context": name, "source": message.find("source").text, "forms": forms, "type": translation.get("type")})
    return out


def lupdate() -> str:
    found = Path(sys.executable).with_name("pyside6-lupdate")
    if not found.exists():
        pytest.fail(f"{found} is missing: install the project's dependencies with scripts/dev.sh")
    return str(found)


def test_every_string_of_the_window_has_a_real_indonesian_translation(tmp_path):
    ts = I18N / "lokal_id.ts"
    # Up to date: pyside6-lupdate over the code finds no string the .ts does not have.
    fresh = tmp_path / "fresh.ts"
    shutil.copy(ts, fresh)
    sys.path.insert(0, str(ROOT / "scripts"))
    import translations

    sources = [str(p.relative_to(ROOT)) for p in translations.sources()]
    subprocess.run([lupdate(), "-no-obsolete", "-locations", "none", *sources, "-ts", str(fresh)], cwd=ROOT, check=True, capture_output=True)
    committed = {(m["context"], m["source"]) for m in messages(ts)}
    in_code = {(m["context"], m["source"]) for m in messages(fresh)}
    assert in_code - committed == set(), "strings the .ts lacks: run .venv/bin/python scripts/translations.py, then translate them"
    assert committed - in_code == set(), "strings no longer in the code: run .venv/bin/python scripts/translations.py"

    entries = messages(ts)
    assert len(entries) >= 350
    for m in entries:
        label = f"{m['context']}: {m['source']!r}"
        assert m["type"] is None, f"{label} is {m['type']}"
        for form in m["forms"]:
            assert form.strip(), f"{label} has no Indonesian translation"
            assert sorted(PLACEHOLDER.findall(form)) == sorted(PLACEHOLDER.findall(m["source"])), f"{label}: the placeholders differ in {form!r}"
            assert form.count("&") == m["source"].count("&"), f"{label}: the Alt letter is lost in {form!r}"
    # Translated, not copied: only names, codes and units may stay as they are.
    same = [m["source"] for m in entries if m["forms"][0] == m["source"]]
    assert len(same) <= 20, same


def test_english_says_its_plural_forms():
    plural_sources = {(m["context"], m["source"]) for m in messages(I18N / "lokal_id.ts") if "%n" in m["source"] or "%Ln" in m["source"]}
    english = {(m["context"], m["source"]): m["forms"] for m in messages(I18N / "lokal_en.ts")}
    assert plural_sources and set(english) == plural_sources
    for key, forms in english.items():
        assert len(forms) == 2 and all(f.strip() for f in forms) and "(s)" not in "".join(forms), (key, forms)


def test_each_translation_context_is_named_like_its_variable():
    """lupdate files `Name.tr(...)` under the context "Name": a Context("Other") would never be found at run time."""
    for path in (ROOT / "app").rglob("*.py"):
        for variable, context in re.findall(r'^(\w+) = Context\("(\w+)"\)', path.read_text(encoding="utf-8"), re.M):
            assert variable == context, f"{path.relative_to(ROOT)}: {variable} = Context({context!r})"


def test_the_compiled_catalogues_are_there_and_load(qapp):
    from PySide6.QtCore import QTranslator

    for code in language.LANGUAGES:
        path = language.catalogue(code)
        if not path.exists():
            pytest.fail(f"{path} is missing: scripts/dev.sh compiles the .ts files (.venv/bin/python scripts/translations.py --compile)")
        assert QTranslator().load(str(path)), path
    assert language.install("id") == "id"
    try:
        from PySide6.QtCore import QCoreApplication

        assert QCoreApplication.translate("MainWindow", "&File") == "&Berkas"
        assert QCoreApplication.translate("QPlatformTheme", "Cancel") == "Batal"  # Qt's own buttons, from qt_id.qm
    finally:
        language.install("en")


def probe(data: Path, env_lang: str, *args: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("LOKAL_LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANGUAGE")}
    env.update(LANG=env_lang, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run([sys.executable, str(PROBE), str(data), *args], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_under_an_indonesian_locale_the_menus_and_the_message_box_are_indonesian(tmp_path):
    shown = probe(tmp_path, "id_ID.UTF-8")
    assert shown["language"] == "id" and shown["checked"] == language.SYSTEM
    assert shown["menus"] == ["&Berkas", "&Sunting", "&Obrolan", "&Model", "&Tampilan", "Ba&ntuan"]
    letters = [title[title.index("&") + 1].lower() for title in shown["menus"]]
    assert len(set(letters)) == len(letters), letters  # each menu its own Alt letter
    assert shown["placeholder"] == "Kirim pesan ke model  (Enter untuk mengirim, Shift+Enter untuk baris baru)"
    assert shown["file_menu"][0] == "Obrolan &baru"
    # The language menu names each language in itself, and says which one the system has.
    assert shown["languages"] == {"": "Bahasa &sistem (Bahasa Indonesia)", "en": "English", "id": "Bahasa Indonesia"}
    english = probe(tmp_path / "en", "en_US.UTF-8")
    assert english["language"] == "en" and english["menus"][0] == "&File"


def test_view_language_overrides_the_os_and_is_kept(tmp_path):
    chosen = probe(tmp_path, "id_ID.UTF-8", "en")
    assert chosen["question"] == "Lokal akan memakai English saat jendelanya dibuka berikutnya."
    again = probe(tmp_path, "id_ID.UTF-8")
    assert again["language"] == "en" and again["checked"] == "en" and again["menus"][0] == "&File"
    back = probe(tmp_path, "en_US.UTF-8", "")  # back to the system's language...
    assert back["question"] is None  # ... which is the language in use already: nothing to restart
    assert probe(tmp_path, "id_ID.UTF-8")["language"] == "id"
