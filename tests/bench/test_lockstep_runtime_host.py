"""bench/lockstep_host.py's runtime hosts: `python-runtime` loads the runtime process's own modules before llama_cpp,
then steps as the other hosts do; `python-runtime-model` steps through the runtime's own LlamaModel. So a lockstep run
can tell what the runtime's imports, and its decode path, cost a step."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from lockstep_host import WARM_UP, valid_host  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("spec", ["python-runtime+split+seats", "python-runtime-model+split"])
def test_a_runtime_host_loads_the_runtime_then_steps(starter_model, spec):
    host = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "lockstep_host.py"), "--host", spec, str(starter_model), "1", "16", "2"],
        input=b"xx", capture_output=True, timeout=300, cwd=ROOT,
    )
    assert host.returncode == 0, host.stderr.decode(errors="replace")[-2000:]
    lines = host.stdout.decode().split()
    assert lines[0] == "ready"
    assert len(lines) == 3 and all(0 < float(step) < 60 for step in lines[1:])  # one timed step per byte sent


def test_the_runtime_host_is_a_python_host():
    assert valid_host("python-runtime") and valid_host("python-runtime+split+seats") and valid_host("python-runtime-model+split")
    assert not valid_host("python-runtime+bogus")


def test_an_unknown_flag_is_named_as_such():
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "lockstep_host.py"), "--jsn", "out.json"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert run.returncode == 2
    assert "unrecognized arguments: --jsn out.json" in run.stderr and "--compare" not in run.stderr.splitlines()[-1]


def test_the_report_is_also_written_where_json_says(starter_model, tmp_path):
    out = tmp_path / "lockstep.json"
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "lockstep_host.py"), "--model", str(starter_model), "--compare", "python-bindings:python",
         "--reps", "2", "--steps", str(WARM_UP + 3), "--depth", "16", "--json", str(out)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    written = json.loads(out.read_text())
    assert written == json.loads(run.stdout)
    ratio = written["speed_ratios"]["python-bindings_over_python"]
    assert len(ratio["ratios"]) == 2 and all(r > 0 for r in ratio["ratios"])
