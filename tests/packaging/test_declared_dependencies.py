"""Every third-party package app/ and runtime/ import is a declared dependency: the README's first
command installs only `pyproject.toml`'s dependencies (no test extras), so an undeclared import works
in the test environment and fails on a user's clean machine."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
FIRST_PARTY = {"app", "runtime"}


def declared_distributions(pyproject: dict) -> set[str]:
    """The normalised names of the distributions a plain `pip install .` brings."""
    return {normalise(re.split(r"[ <>=!~\[;]", spec, maxsplit=1)[0]) for spec in pyproject["project"].get("dependencies", [])}


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def imported_top_level(source: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def undeclared_imports(sources: dict[str, str], pyproject: dict) -> dict[str, str]:
    """top-level module -> the first file importing it, for third-party modules no declared distribution provides."""
    declared = declared_distributions(pyproject)
    owners = packages_distributions()
    missing: dict[str, str] = {}
    for where, source in sorted(sources.items()):
        for module in sorted(imported_top_level(source)):
            if module in sys.stdlib_module_names or module in FIRST_PARTY:
                continue
            providers = {normalise(dist) for dist in owners.get(module, [module])}
            if not providers & declared:
                missing.setdefault(module, where)
    return missing


def project_sources() -> dict[str, str]:
    files = [*sorted((ROOT / "app").rglob("*.py")), *sorted((ROOT / "runtime").rglob("*.py"))]
    return {str(f.relative_to(ROOT)): f.read_text(encoding="utf-8") for f in files}


def test_every_third_party_import_of_app_and_runtime_is_a_declared_dependency():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    missing = undeclared_imports(project_sources(), pyproject)
    assert not missing, "imported but not in pyproject.toml's dependencies: " + ", ".join(f"{m} ({where})" for m, where in missing.items())


def test_the_check_finds_an_import_that_only_the_test_extras_provide():
    pyproject = {"project": {"dependencies": ["PySide6-Essentials>=6.7"], "optional-dependencies": {"test": ["pygments", "pytest"]}}}
    sources = {"app/chat/highlight.py": "from pygments import highlight\nfrom PySide6.QtCore import Qt\nimport os\nfrom . import x\n"}
    assert undeclared_imports(sources, pyproject) == {"pygments": "app/chat/highlight.py"}
