"""`lokal serve --preset NAME`: the preset's model and load settings are served, and its system prompt and
sampling fill what a request leaves out (a request's own values still win); an unknown name is refused."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from app.presets.preset import Preset, Sampling
from app.presets.store import PresetStore
from app.storage.store import Store
from runtime.models.load_settings import LoadSettings
from serve_process import MODEL_NAME, ROOT, Served

pytestmark = pytest.mark.slow

PROMPT = "You are a terse assistant for a lighthouse. " * 8  # long enough to show in the prompt's token count


def test_an_unknown_preset_is_refused_with_the_names_there_are(tmp_path):
    env = dict(os.environ, LOKAL_DATA_DIR=str(tmp_path / "data"))
    run = subprocess.run([sys.executable, "-m", "app", "serve", "--port", "0", "--preset", "nope"], cwd=ROOT, capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode == 2, run.stderr
    assert "no preset is called 'nope'" in run.stderr and "code-reviewer (Code reviewer)" in run.stderr


def test_a_presets_model_load_settings_prompt_and_sampling_become_the_apis_defaults(tmp_path, starter_model):
    data = tmp_path / "data"
    store = Store(data / "conversations.sqlite3")
    presets = PresetStore(store.path)
    presets.save(Preset("Terse", PROMPT, Sampling(temperature=0.0, max_tokens=2), str(starter_model), LoadSettings(n_seq=1, n_threads=1)))
    presets.close()
    store.close()
    server = Served("--preset", "terse", n_ctx=1024, env=dict(os.environ, LOKAL_DATA_DIR=str(data)))  # no --model: the preset's
    try:
        listening = next(e for e in server.all_events if e["event"] == "listening")
        assert listening["preset"] == "Terse"
        server.wait_ready()
        ready = next(e for e in server.all_events if e.get("state") == "ready")
        assert ready["loaded"]["path"] == str(starter_model) and ready["loaded"]["n_seq"] == 1 and ready["loaded"]["n_ctx"] == 1024  # the flag wins over n_ctx

        def ask(**body):
            reply = server.http("POST", "/v1/chat/completions", {"model": MODEL_NAME, **body})
            assert reply.status == 200, reply.body
            return reply.json()

        plain = ask(messages=[{"role": "user", "content": "Say hello."}])
        assert plain["usage"]["completion_tokens"] <= 2  # the preset's max_tokens
        own_system = ask(messages=[{"role": "system", "content": "Hi."}, {"role": "user", "content": "Say hello."}])
        # The preset's long system prompt went into the first, not the second (a request's own system message wins).
        assert plain["usage"]["prompt_tokens"] > own_system["usage"]["prompt_tokens"] + 40
        longer = ask(messages=[{"role": "user", "content": "Count from one to twenty in words."}], max_tokens=6)
        assert longer["usage"]["completion_tokens"] > 2  # a request's own max_tokens wins
    finally:
        assert server.close() == 0
