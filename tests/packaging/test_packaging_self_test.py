"""`lokal --self-test PATH.gguf` from source: the real window offscreen, the real runtime process
it starts, the real starter model; run from a scratch directory with a minimal environment.
The frozen app runs the same check in test_packaging_linux.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def self_test(model, tmp_path: Path, **env) -> subprocess.CompletedProcess:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    minimal = {"HOME": str(home), "QT_QPA_PLATFORM": "offscreen", "LANG": "C.UTF-8", **env}
    return subprocess.run(
        [sys.executable, "-m", "app", "--self-test", str(model)],
        cwd=tmp_path, env=minimal, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
    )


def processes_in(directory: Path) -> list:
    import psutil

    found = []
    for proc in psutil.process_iter(["cwd"]):
        if proc.info.get("cwd") == str(directory):
            found.append(proc)
    return found


def test_self_test_loads_the_model_and_generates_eight_tokens(starter_model, tmp_path):
    done = self_test(starter_model, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, done.stdout
    line = lines[0]
    assert line.startswith("lokal self-test: ok: window 'Lokal' shown"), line
    assert "same executable" in line and starter_model.name in line and "8 tokens" in line, line
    assert line.endswith("languages: en, id"), line
    # The check points the Lokal folders at a scratch folder: nothing of Lokal's lands under HOME.
    assert [p for p in (tmp_path / "home").rglob("*") if "lokal" in str(p).lower()] == []


def test_missing_model_file_is_refused_with_the_reason(tmp_path):
    done = self_test(tmp_path / "nowhere.gguf", tmp_path)
    assert done.returncode == 2
    assert "lokal self-test: FAILED: no model file at" in done.stderr
    assert done.stdout == ""


def test_a_file_that_is_not_gguf_is_refused_with_the_reason(tmp_path):
    bogus = tmp_path / "notes.gguf"
    bogus.write_text("this is not a model\n")
    done = self_test(bogus, tmp_path)
    assert done.returncode == 2
    assert "is not a GGUF file" in done.stderr


def test_a_broken_gguf_fails_with_the_runtimes_reason(starter_model, tmp_path):
    """GGUF magic, cut short: the runtime refuses the load and the check reports that refusal."""
    broken = tmp_path / "cut.gguf"
    with starter_model.open("rb") as f:
        broken.write_bytes(f.read(4096))
    done = self_test(broken, tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr[-2000:]
    assert "lokal self-test: FAILED: the runtime answered error" in done.stderr


def test_a_bad_timeout_setting_is_refused(starter_model, tmp_path):
    done = self_test(starter_model, tmp_path, LOKAL_SELF_TEST_TIMEOUT="soon")
    assert done.returncode == 2
    assert "LOKAL_SELF_TEST_TIMEOUT must be a number of seconds" in done.stderr


def test_a_check_that_runs_out_of_time_fails_and_stops_its_runtime(starter_model, tmp_path):
    # A fifth of a second cannot cover starting a Python runtime process and loading a model.
    done = self_test(starter_model, tmp_path, LOKAL_SELF_TEST_TIMEOUT="0.2")
    assert done.returncode == 3, done.stdout + done.stderr[-2000:]
    assert "lokal self-test: FAILED: no result within" in done.stderr
    import psutil

    # The runtime it started (cwd: this test's folder) was stopped, not left running.
    _gone, alive = psutil.wait_procs(processes_in(tmp_path), timeout=10)
    assert alive == []
