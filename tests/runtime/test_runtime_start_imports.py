"""The runtime process starts without the hub client: huggingface_hub's API and its HTTP stack (httpx2) cost about 0.2 s
and 20 MB, and only the hub's methods need them (runtime/hub/service.py imports them there). bench/runtime_start.py
measures the start."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HUB_CLIENT = ("httpx2", "huggingface_hub.hf_api", "huggingface_hub.errors", "runtime.hub.hf", "runtime.hub.downloads")


def modules_after(code: str) -> set[str]:
    probe = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_the_runtime_process_starts_without_the_hub_client():
    started = modules_after("import runtime.server")
    assert "runtime.hub.service" in started  # its methods are registered at the start
    assert not started & set(HUB_CLIENT), sorted(started & set(HUB_CLIENT))


def test_a_hub_method_brings_the_hub_client_in():
    used = modules_after("from runtime.hub.service import HubService\nHubService(lambda *a: None).downloads")
    assert {"httpx2", "runtime.hub.downloads"} <= used
