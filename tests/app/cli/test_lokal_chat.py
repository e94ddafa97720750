"""`lokal chat` end to end: the real command, its real runtime child, the real model."""

import json
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

pytestmark = pytest.mark.slow

LOKAL = [sys.executable, "-m", "app"]


def lokal(*args, input=None, timeout=180):
    return subprocess.run([*LOKAL, *args], input=input, capture_output=True, text=True, timeout=timeout)


def test_one_prompt_streams_a_reply(starter_model):
    proc = lokal("chat", "--model", str(starter_model), "--max-tokens", "16", "--temperature", "0", "What is 2+2?")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip()


def test_json_multi_turn_from_stdin_reuses_the_cache(starter_model):
    turns = "Name a fruit.\nName another fruit.\nAnd one more?\n"
    proc = lokal("chat", "--model", str(starter_model), "--json", "--max-tokens", "24", "--temperature", "0", "--system", "Be brief.", input=turns)
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in proc.stdout.splitlines()]  # nothing but JSON on stdout
    assert [r["turn"] for r in records] == [1, 2, 3]
    assert len({r["conversation_id"] for r in records}) == 1
    for r in records:
        assert set(r["stats"]) >= {"prompt_tokens", "prompt_tokens_reused", "prompt_tokens_evaluated", "completion_tokens", "ttft_ms", "prefill_tokens_per_s", "decode_tokens_per_s", "total_ms", "rss_bytes"}
    third = records[2]["stats"]
    assert third["prompt_tokens_reused"] > records[1]["stats"]["prompt_tokens"]
    assert third["prompt_tokens_evaluated"] <= 20


def test_missing_model_is_a_clear_error(tmp_path):
    proc = lokal("chat", "--model", str(tmp_path / "nope.gguf"), "hi")
    assert proc.returncode == 1
    assert "model file not found" in proc.stderr and proc.stdout == ""


def test_runtime_abort_is_noticed_and_said_plainly(starter_model):
    proc = subprocess.Popen([*LOKAL, "chat", "--model", str(starter_model), "--json", "--max-tokens", "8", "--temperature", "0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        proc.stdin.write("Hello\n")
        proc.stdin.flush()
        first = json.loads(proc.stdout.readline())
        assert first["turn"] == 1
        children = psutil.Process(proc.pid).children()
        assert len(children) == 1
        os.kill(children[0].pid, signal.SIGABRT)
        children[0].wait(10)
        proc.stdin.write("Are you there?\n")
        proc.stdin.flush()
        proc.stdin.close()
        proc.wait(60)
        out, err = proc.stdout.read(), proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3
    assert "runtime stopped unexpectedly" in err and "SIGABRT" in err
    assert out == ""
