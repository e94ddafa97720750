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
    assert all(r["reasoning"] == "" for r in records)  # a model that does not think (a reasoning model's thinking is here)
    assert len({r["conversation_id"] for r in records}) == 1
    for r in records:
        assert set(r["stats"]) >= {"prompt_tokens", "prompt_tokens_reused", "prompt_tokens_evaluated", "completion_tokens", "ttft_ms", "prefill_tokens_per_s", "decode_tokens_per_s", "total_ms", "rss_bytes"}
    # Where the layers ran, beside the figures they explain: this build of llama.cpp has no GPU backend.
    assert all(r["offload"]["layers"] == 0 and r["offload"]["layers_total"] == 31 and r["offload"]["reason"] == "this build runs on the CPU" for r in records)
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


SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 16}, "legs": {"type": "integer"}}, "required": ["name", "legs"]}


def test_json_schema_file_makes_every_reply_valid_json(starter_model, tmp_path):
    import jsonschema

    schema_file = tmp_path / "animal.json"
    schema_file.write_text(json.dumps(SCHEMA))
    turns = "Describe a dog.\nAnd a spider?\n"
    proc = lokal("chat", "--model", str(starter_model), "--json", "--max-tokens", "80", "--temperature", "0.8", "--seed", "2", "--min-p", "0.1", "--repeat-penalty", "1.2", "--json-schema", str(schema_file), input=turns)
    assert proc.returncode == 0, proc.stderr
    for record in map(json.loads, proc.stdout.splitlines()):
        assert record["finish_reason"] == "stop"
        jsonschema.validate(json.loads(record["reply"]), SCHEMA)


def test_repeat_penalty_and_min_p_reach_the_sampler(starter_model):
    ask = lambda *flags: lokal("chat", "--model", str(starter_model), "--max-tokens", "24", "--temperature", "0", *flags, "Repeat after me: la la la la la la la la").stdout
    assert ask("--repeat-penalty", "1.0") != ask("--repeat-penalty", "2.0")


@pytest.mark.parametrize("content, said", [("{not json", "--json-schema"), (json.dumps({"type": "integer", "minimum": 3}), "number bounds cannot be enforced")])
def test_a_bad_schema_file_is_a_clear_error(starter_model, tmp_path, content, said):
    schema_file = tmp_path / "bad.json"
    schema_file.write_text(content)
    proc = lokal("chat", "--model", str(starter_model), "--json-schema", str(schema_file), "hi")
    assert proc.returncode == 1 and said in proc.stderr and proc.stdout == ""


THINKING_TEMPLATE = (  # SmolLM2's turns, and a reply that opens with a thought (as DeepSeek-R1's template writes it)
    "{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n<think>\\n' }}{% endif %}"
)


def test_a_reasoning_models_thinking_goes_to_stderr_and_the_answer_alone_to_stdout(starter_model, tmp_path):
    from gguf_files import with_chat_template

    thinker = with_chat_template(starter_model, tmp_path / "thinker.gguf", THINKING_TEMPLATE)
    args = ("chat", "--model", str(thinker), "--max-tokens", "12", "--temperature", "0", "--n-ctx", "512", "Why is the sky blue?")
    shown = lokal(*args)
    assert shown.returncode == 0, shown.stderr
    assert "Thinking…\n" in shown.stderr and "\n…done thinking." in shown.stderr, shown.stderr
    thought = shown.stderr.split("Thinking…\n", 1)[1].split("\n…done thinking.", 1)[0].strip()
    assert thought, shown.stderr  # the template opened a thought: what the model wrote is its thinking
    assert thought not in shown.stdout
    hidden = lokal(*args, "--hide-thinking")
    assert hidden.returncode == 0, hidden.stderr
    assert "Thinking…" not in hidden.stderr and thought not in hidden.stderr + hidden.stdout
