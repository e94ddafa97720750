"""The README's first command works with only the declared dependencies.

scripts/dev.sh test makes `.cache/clean-venv` the way a new user's machine gets Lokal: a fresh
virtual environment and `pip install .` with no extras (the llama-cpp-python wheel it built is
reused). Here the installed app, not this checkout, opens its window offscreen, starts its runtime,
loads the starter model and generates (`lokal --self-test`).
"""

from __future__ import annotations

import filecmp
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
CLEAN = ROOT / ".cache" / "clean-venv"
HOW = "run `bash scripts/dev.sh test`, which makes it (a fresh venv, then `pip install .` with no extras)"


def clean_python() -> Path:
    python = CLEAN / "bin" / "python"
    if not python.exists():
        pytest.fail(f"no clean environment at {CLEAN}: {HOW}")
    return python


def run_clean(*args: str, cwd: Path, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([str(clean_python()), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def test_the_clean_environment_has_no_test_extras_and_holds_this_checkout(tmp_path):
    for module in ("pytest", "pytestqt", "hypothesis", "openai", "PyInstaller"):
        done = run_clean("-c", f"import {module}", cwd=tmp_path)
        assert done.returncode != 0 and "ModuleNotFoundError" in done.stderr, f"{module} is installed in the clean environment"
    where = run_clean("-c", "import app, runtime, os; print(os.path.dirname(app.__file__)); print(os.path.dirname(runtime.__file__))", cwd=tmp_path)
    assert where.returncode == 0, where.stderr
    installed = [Path(line) for line in where.stdout.split()]
    assert all(CLEAN in path.parents for path in installed), f"not an installed copy: {installed}"
    stale = []
    for package, copy in zip(("app", "runtime"), installed):
        for source in (ROOT / package).rglob("*.py"):
            target = copy / source.relative_to(ROOT / package)
            if not target.exists() or not filecmp.cmp(source, target, shallow=False):
                stale.append(str(source.relative_to(ROOT)))
    assert not stale, f"the clean environment is older than this checkout ({', '.join(stale[:5])}…): {HOW}"


def test_the_app_installed_with_only_its_declared_dependencies_opens_loads_and_generates(tmp_path, starter_model):
    lokal = CLEAN / "bin" / "lokal"
    if not lokal.exists():
        pytest.fail(f"no `lokal` in {CLEAN}: {HOW}")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "QT_QPA_PLATFORM": "offscreen", "LOKAL_LOG_DIR": str(tmp_path / "logs")}
    done = subprocess.run([str(lokal), "--self-test", str(starter_model)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "lokal self-test: ok" in done.stdout
    assert done.stdout.strip().endswith("languages: en, id"), done.stdout  # `pip install .` carried the compiled translations
