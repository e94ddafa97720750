"""bench/own_folders.py: a benchmark's runtime gets folders of the run's own, gone when the run ends; a folder the
shell chose is used as it is and kept."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
RUN = "import sys; sys.path.insert(0, sys.argv[1]); from own_folders import own_folder; print(own_folder('LOKAL_CACHE_DIR', 'lokal-test-'))"


def run(env: dict[str, str]) -> tuple[Path, str]:
    """(the folder own_folder returned, LOKAL_CACHE_DIR as the run's environment then held it)."""
    out = subprocess.run([sys.executable, "-c", RUN + "; import os; print(os.environ['LOKAL_CACHE_DIR'])", str(BENCH)], env=env, capture_output=True, text=True, timeout=60, check=True)
    returned, seen = out.stdout.split()
    return Path(returned), seen


def test_a_run_gets_a_new_folder_that_is_gone_when_it_exits(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "LOKAL_CACHE_DIR"} | {"TMPDIR": str(tmp_path)}
    folder, seen = run(env)
    assert folder.parent == tmp_path and folder.name.startswith("lokal-test-")
    assert seen == str(folder)  # the runtime it starts inherits it
    assert not folder.exists()


def test_a_folder_the_shell_chose_is_used_and_kept(tmp_path):
    chosen = tmp_path / "mine"
    chosen.mkdir()
    (chosen / "kept").write_text("x")
    folder, seen = run(dict(os.environ, LOKAL_CACHE_DIR=str(chosen)))
    assert folder == chosen and seen == str(chosen)
    assert (chosen / "kept").read_text() == "x"
