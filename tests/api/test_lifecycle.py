"""`lokal serve` from start to stop: safe defaults, 503 while the model loads, and a runtime that dies and comes back."""

import os
import signal
import subprocess
import sys

import openai
import psutil
import pytest

from serve_process import MODEL_NAME, ROOT, Served

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.1", "example.org"])
def test_refuses_a_network_address_without_allow_network(host):
    run = subprocess.run([sys.executable, "-m", "app", "serve", "--host", host, "--port", "0"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert "--allow-network" in run.stderr


def test_503_while_loading_then_serves_without_cors(starter_model):
    server = Served("--n-threads", "1", model=str(starter_model))
    try:
        # The runtime process has only just been started: the model cannot be ready yet.
        loading = server.http("POST", "/v1/chat/completions", {"model": MODEL_NAME, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1})
        assert loading.status == 503, loading.body
        assert loading.headers["retry-after"] and loading.json()["error"]["code"] == "model_loading"
        assert server.http("GET", "/health", key=None).status in (200, 503)
        server.wait_ready()
        assert server.health()["status"] == "ready"
        reply = server.http("POST", "/v1/chat/completions", {"model": MODEL_NAME, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1}, headers={"Origin": "http://any.example"})
        assert reply.status == 200
        assert "access-control-allow-origin" not in reply.headers  # no CORS unless --cors
    finally:
        assert server.close() == 0


def test_a_runtime_that_dies_is_restarted_and_serving_resumes(starter_model):
    server = Served("--n-threads", "1", model=str(starter_model))
    try:
        server.wait_ready()
        client = server.openai()
        before = client.completions.create(model=MODEL_NAME, prompt="1, 2, 3,", max_tokens=3, temperature=0.0).choices[0].text
        (runtime,) = psutil.Process(server.process.pid).children()
        os.kill(runtime.pid, signal.SIGKILL)
        runtime.wait(timeout=30)
        with pytest.raises(openai.APIStatusError) as err:
            client.completions.create(model=MODEL_NAME, prompt="1, 2, 3,", max_tokens=3, temperature=0.0)
        assert err.value.status_code == 503
        server.wait_event("state", 120, state="loading")
        server.wait_ready()
        assert server.health()["restarts"] == 1
        after = client.completions.create(model=MODEL_NAME, prompt="1, 2, 3,", max_tokens=3, temperature=0.0).choices[0].text
        assert after == before
        assert server.process.poll() is None
    finally:
        assert server.close() == 0
