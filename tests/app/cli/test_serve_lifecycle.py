"""`lokal serve` from start to stop: safe defaults, the --allow-network warning, the load sent before the API
listens, and a runtime that dies and comes back. (503 while a model loads: tests/runtime/api/test_api_in_runtime.py,
where a load that waits behind an API reply makes it deterministic.)"""

import os
import signal
import subprocess
import sys

import openai
import psutil
import pytest

from serve_process import MODEL_NAME, ROOT, Served
from waiting import wait_until

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.1", "example.org"])
def test_refuses_a_network_address_without_allow_network(host):
    run = subprocess.run([sys.executable, "-m", "app", "serve", "--host", host, "--port", "0"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert "--allow-network" in run.stderr


def test_allow_network_binds_every_interface_with_a_warning(starter_model):
    # 0.0.0.0 includes loopback: the test reaches it on 127.0.0.1 only.
    server = Served("--allow-network", "--n-threads", "1", model=str(starter_model))
    try:
        listening = next(e for e in server.all_events if e["event"] == "listening")
        assert listening["host"] == "0.0.0.0" and server.url.startswith("http://0.0.0.0:")
        wait_until(lambda: any("WARNING: listening on 0.0.0.0" in line for line in server.stderr), 10, "the warning on stderr")
        server.wait_ready()
        assert server.health()["status"] == "ready"
        assert server.http("GET", "/v1/models", key=None).status == 401  # the key is still needed
    finally:
        assert server.close() == 0


def test_the_load_starts_before_the_api_listens(starter_model):
    """So a request that finds the API listening finds the model loading (503) or loaded, never missing."""
    server = Served("--n-threads", "1", model=str(starter_model))
    try:
        server.wait_ready()
        order = [(e["event"], e.get("state")) for e in server.all_events]
        assert order.index(("state", "loading")) < order.index(("listening", None)) < order.index(("state", "ready"))
    finally:
        assert server.close() == 0


def test_serves_once_loaded_without_cors(starter_model):
    server = Served("--n-threads", "1", model=str(starter_model))
    try:
        server.wait_ready()
        assert server.health()["status"] == "ready"
        reply = server.http("POST", "/v1/chat/completions", {"model": MODEL_NAME, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1}, headers={"Origin": "http://any.example"})
        assert reply.status == 200
        assert "access-control-allow-origin" not in reply.headers  # no CORS unless --cors
        assert not any("WARNING" in line for line in server.stderr)  # loopback: nothing to warn about
    finally:
        assert server.close() == 0


def test_a_runtime_that_dies_is_restarted_on_the_same_port_and_serving_resumes(starter_model):
    server = Served("--n-threads", "1", model=str(starter_model))
    try:
        server.wait_ready()
        client = server.openai()
        before = client.completions.create(model=MODEL_NAME, prompt="1, 2, 3,", max_tokens=3, temperature=0.0).choices[0].text
        (runtime,) = psutil.Process(server.process.pid).children()
        assert any(c.laddr.port == server.port and c.status == psutil.CONN_LISTEN for c in runtime.net_connections("tcp"))  # the runtime itself serves
        os.kill(runtime.pid, signal.SIGKILL)
        runtime.wait(timeout=30)
        # The API died with its runtime: refused until the new one listens, then 503 while it loads.
        with pytest.raises((openai.APIConnectionError, openai.APIStatusError)) as err:
            client.completions.create(model=MODEL_NAME, prompt="1, 2, 3,", max_tokens=3, temperature=0.0)
        assert isinstance(err.value, openai.APIConnectionError) or err.value.status_code == 503
        server.wait_event("state", 120, state="loading", restarts=1)
        assert server.wait_event("listening", 120)["port"] == server.port
        server.wait_event("state", 120, state="ready", restarts=1)
        assert server.restarts == 1
        after = client.completions.create(model=MODEL_NAME, prompt="1, 2, 3,", max_tokens=3, temperature=0.0).choices[0].text
        assert after == before
        assert server.process.poll() is None
    finally:
        assert server.close() == 0
