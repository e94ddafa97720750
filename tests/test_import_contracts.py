"""The import graph keeps its shape: import-linter's contracts ([tool.importlinter] in pyproject.toml).

The window never reaches llama.cpp, the runtime never imports Qt or the window, and the packages of each
side sit in layers that import only downwards (no two packages import each other). A broken contract
fails with lint-imports' own report: which import, through which chain.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_import_contracts_are_kept():
    lint_imports = Path(sys.executable).with_name("lint-imports")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    run = subprocess.run(
        [str(lint_imports), str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert run.returncode == 0, f"lint-imports found a broken contract:\n{run.stdout}{run.stderr}"
    assert "0 broken" in run.stdout
