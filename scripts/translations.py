"""Refresh the translation sources from the code, or compile them.

    .venv/bin/python scripts/translations.py            # pyside6-lupdate: new strings into app/resources/i18n/*.ts
    .venv/bin/python scripts/translations.py --compile  # pyside6-lrelease: the .ts files into .qm

Compiling is part of the build: setup.py's build_py calls compile_all() (PySide6-Essentials, which
has lrelease, is in pyproject.toml's build-system.requires), so `pip install .`, `pip install -e .`,
scripts/dev.sh and scripts/release.sh all carry the same .qm files. --compile is for after editing a .ts.

After a refresh, translate the new (unfinished) entries with pyside6-linguist or in the .ts itself;
tests/app/ui/test_translations.py fails while an Indonesian entry is empty. The command line
(app/cli) stays English: its output is read by scripts as much as by people.
lokal_en.ts holds only the plural forms of the English source ("%n token(s)" -> "1 token", "2 tokens").
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
I18N = ROOT / "app" / "resources" / "i18n"
BIN = Path(sys.executable).parent


class TranslationToolMissing(RuntimeError):
    pass


def sources() -> list[Path]:
    return sorted(p for p in (ROOT / "app").rglob("*.py") if "cli" not in p.relative_to(ROOT / "app").parts[:1])


def tool(name: str) -> str:
    """PySide6's wrapper for a Qt tool: beside this Python (a venv), else on PATH (pip's isolated
    build environment puts its scripts there)."""
    found = BIN / name
    if found.exists():
        return str(found)
    if (on_path := shutil.which(name)) is not None:
        return on_path
    raise TranslationToolMissing(f"{name} not found beside {sys.executable} nor on PATH: it comes with PySide6-Essentials (pip install PySide6-Essentials)")


def update() -> None:
    files = [str(p.relative_to(ROOT)) for p in sources()]
    for ts in sorted(I18N.glob("lokal_*.ts")):
        extra = ["-pluralonly"] if ts.stem == "lokal_en" else []
        subprocess.run([tool("pyside6-lupdate"), *extra, "-no-obsolete", "-locations", "none", *files, "-ts", str(ts.relative_to(ROOT))], cwd=ROOT, check=True)


def compile_all(i18n: Path = I18N) -> list[Path]:
    """Each .ts in i18n compiled to the .qm beside it; returns the .qm files."""
    compiled = []
    for ts in sorted(i18n.glob("*.ts")):
        qm = ts.with_suffix(".qm")
        subprocess.run([tool("pyside6-lrelease"), "-silent", str(ts), "-qm", str(qm)], check=True)
        compiled.append(qm)
    if not compiled:
        raise FileNotFoundError(f"no .ts files in {i18n}")
    return compiled


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compile", action="store_true", help="compile the .ts files into .qm")
    args = parser.parse_args()
    compile_all() if args.compile else update()
    return 0


if __name__ == "__main__":
    sys.exit(main())
