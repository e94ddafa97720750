"""Speculation through the real runtime process: model.load's draft_path, chat.generate's speculation, the stats, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

from gguf_files import write_gguf
from runtime.client import RuntimeClient
from runtime.protocol import ChatGenerateParams, ChatMessage, ErrorCode, ModelLoadParams, RpcError

pytestmark = pytest.mark.slow

CODE = "def area(w, h):\n    return w * h\n\ndef perimeter(w, h):\n    return 2 * (w + h)\n"
EDIT = [ChatMessage("user", f"Rewrite this code, renaming w to width and h to height:\n{CODE}")]


def ask(client, speculation, max_tokens=16, messages=EDIT):
    return client.chat(ChatGenerateParams("spec", messages, max_tokens=max_tokens, temperature=0.0, speculation=speculation), timeout=300)


@pytest.fixture(scope="module")
def exact_runtime(starter_model):
    """Verification one token at a time and a fixed draft length (test-only knobs): outputs comparable byte for byte."""
    env = dict(os.environ, LOKAL_AUTO_SPECULATION="on")
    env.update(LOKAL_SPECULATIVE_VERIFY="single", LOKAL_SPECULATIVE_FIXED_K="4")
    client = RuntimeClient(env=env)
    client.initialize("pytest")
    info = client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=1024, draft_path=str(starter_model)))
    assert info.draft_path == str(starter_model)
    yield client
    client.close()


def test_every_mode_gives_the_plain_reply_and_reports_its_figures(exact_runtime):
    plain = ask(exact_runtime, "off")
    assert plain.stats.speculation == "off" and plain.stats.draft_tokens == 0
    for mode in ("lookup", "draft", "both", "auto"):
        result = ask(exact_runtime, mode)
        s = result.stats
        assert result.text == plain.text, mode
        assert s.speculation == mode
        assert s.draft_tokens > 0 and 0 <= s.draft_tokens_accepted <= s.draft_tokens
        assert s.acceptance_rate == pytest.approx(s.draft_tokens_accepted / s.draft_tokens)
        assert s.target_passes > 0 and s.tokens_per_target_pass >= 1.0
        # Per drafter: their sums are the figures above, and a drafter the mode leaves out drafts nothing.
        assert (s.lookup_draft_tokens + s.model_draft_tokens, s.lookup_draft_tokens_accepted + s.model_draft_tokens_accepted) == (s.draft_tokens, s.draft_tokens_accepted)
        if mode == "lookup":
            assert s.lookup_draft_tokens > 0 and s.model_draft_tokens == 0
        if mode == "draft":
            assert s.model_draft_tokens > 0 and s.lookup_draft_tokens == 0
        assert s.model_draft_tokens_accepted <= s.model_draft_tokens and s.lookup_draft_tokens_accepted <= s.lookup_draft_tokens


def test_live_figures_in_runtime_metrics(exact_runtime):
    first_text = threading.Event()
    # Long enough to be still streaming when the metrics call lands; cancelled once the figures are in.
    call, wait = exact_runtime.generate(ChatGenerateParams("live", EDIT, max_tokens=400, temperature=0.0, speculation="lookup"), lambda _t: first_text.set())
    assert first_text.wait(120)
    live = exact_runtime.metrics().generation
    exact_runtime.cancel(call.id)
    result = wait(300)
    assert live is not None and live.speculation == "lookup"
    assert result.stats.draft_tokens >= live.draft_tokens


def test_auto_is_the_default_and_adapts(loaded_runtime):
    """A runtime without test knobs: auto drafts by prompt lookup and measures the speed-up against plain steps."""
    result = loaded_runtime.chat(ChatGenerateParams("auto", EDIT, max_tokens=32, temperature=0.0), timeout=300)
    s = result.stats
    assert s.speculation == "auto" and s.speculation_notice == ""
    assert s.target_passes >= 1 and s.completion_tokens > 0
    # The first step is always plain (it measures the plain rate), so the speed-up is known.
    assert s.speedup > 0


# ---- bad input: a clear error each, and the runtime keeps serving ------------------------------

def still_serving(client):
    assert client.initialize("pytest").pid == client.pid


def test_unknown_speculation_mode_is_refused(loaded_runtime):
    with pytest.raises(RpcError) as err:
        loaded_runtime.request_unchecked("chat.generate", {"conversation_id": "x", "messages": [{"role": "user", "content": "hi"}], "speculation": "fast"}, timeout=60)
    assert err.value.code == ErrorCode.INVALID_PARAMS and "params.speculation" in err.value.message
    still_serving(loaded_runtime)


def test_draft_mode_without_a_draft_model_is_refused(loaded_runtime):
    with pytest.raises(RpcError) as err:
        ask(loaded_runtime, "draft", max_tokens=4)
    assert err.value.code == ErrorCode.INVALID_PARAMS and "draft_path" in err.value.message
    still_serving(loaded_runtime)


def test_missing_draft_file_is_refused(runtime, starter_model, tmp_path):
    with pytest.raises(RpcError) as err:
        runtime.load_model(ModelLoadParams(path=str(starter_model), n_ctx=256, draft_path=str(tmp_path / "nope.gguf")))
    assert err.value.code == ErrorCode.MODEL_NOT_FOUND and "nope.gguf" in err.value.message
    still_serving(runtime)


def test_draft_that_is_not_gguf_is_refused(runtime, starter_model, tmp_path):
    junk = tmp_path / "draft.gguf"
    junk.write_bytes(b"not a model at all" * 10)
    with pytest.raises(RpcError) as err:
        runtime.load_model(ModelLoadParams(path=str(starter_model), n_ctx=256, draft_path=str(junk)))
    assert err.value.code == ErrorCode.INVALID_MODEL and "draft.gguf" in err.value.message
    still_serving(runtime)


def test_draft_with_another_tokenizer_is_refused_with_the_reason(runtime, starter_model, tmp_path):
    other = write_gguf(tmp_path / "other-tokenizer.gguf", metadata={"general.architecture": "llama", "tokenizer.ggml.model": "llama"}, tensor_elements=1024)
    with pytest.raises(RpcError) as err:
        runtime.load_model(ModelLoadParams(path=str(starter_model), n_ctx=256, draft_path=str(other)))
    assert err.value.code == ErrorCode.INVALID_MODEL
    assert "cannot be a draft model" in err.value.message and "tokenizers differ" in err.value.message
    still_serving(runtime)


def test_lokal_chat_takes_speculation_and_draft(starter_model):
    cmd = [sys.executable, "-m", "app", "chat", "--model", str(starter_model), "--draft", str(starter_model), "--speculation", "both", "--json", "--max-tokens", "16", "--temperature", "0", "--n-ctx", "512", f"Copy this exactly: {CODE}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    stats = json.loads(proc.stdout.splitlines()[-1])["stats"]
    assert stats["speculation"] == "both" and stats["target_passes"] > 0


def test_auto_speculates_by_default_and_decodes_plainly_when_switched_off(starter_model):
    """`auto` speculates unless LOKAL_AUTO_SPECULATION=off (explicit modes speculate either way)."""
    env = {k: v for k, v in os.environ.items() if k != "LOKAL_AUTO_SPECULATION"}
    with RuntimeClient(env=env) as client:
        client.initialize("pytest")
        client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=1024))
        assert ask(client, "auto").stats.speculation == "auto"
    with RuntimeClient(env=dict(env, LOKAL_AUTO_SPECULATION="off")) as client:
        client.initialize("pytest")
        client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=1024))
        auto = ask(client, "auto")
        assert auto.stats.speculation == "off" and auto.stats.draft_tokens == 0
        lookup = ask(client, "lookup")
        assert lookup.stats.speculation == "lookup"
