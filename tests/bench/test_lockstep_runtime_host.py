"""bench/lockstep_host.py's runtime hosts: `python-runtime` loads the runtime process's own modules before llama_cpp,
then steps as the other hosts do; `python-runtime-model` steps through the runtime's own LlamaModel. So a lockstep run
can tell what the runtime's imports, and its decode path, cost a step."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from lockstep_host import valid_host  # noqa: E402

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
