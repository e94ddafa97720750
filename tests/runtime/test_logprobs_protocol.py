"""chat.generate's logprobs through the real runtime process: streamed with the text, the answer's only when the
reply thinks, the same under speculative decoding, and bad values refused."""

import os

import pytest

from bad_input import expect_error
from runtime.client import RuntimeClient
from runtime.protocol import ChatGenerateParams, ChatMessage, ErrorCode, ModelLoadParams, methods

pytestmark = pytest.mark.slow

QUESTION = [ChatMessage("user", "Name three fruits.")]
CODE = "def area(w, h):\n    return w * h\n\ndef perimeter(w, h):\n    return 2 * (w + h)\n"
EDIT = [ChatMessage("user", f"Rewrite this code, renaming w to width and h to height:\n{CODE}")]
# The starter model does not think on its own: this grammar makes its reply begin with a thought block.
THINKING = r'''root ::= "<think>" thought "</think>" "\n"* answer
thought ::= [a-z \n]{8,40}
answer ::= [A-Za-z ,.]{4,24}'''


def streamed(client: RuntimeClient, params: ChatGenerateParams):
    """The result, and the chat.delta notifications of its request in order."""
    deltas: list[dict] = []
    call, wait = client.generate(params, lambda _text: None)

    def keep(method: str, data: dict) -> None:
        if method == methods.CHAT_DELTA.name and data.get("request_id") == call.id:
            deltas.append(data)

    client.add_notification_handler(keep)
    try:
        return wait(120), deltas
    finally:
        client.remove_notification_handler(keep)


def test_each_delta_carries_its_tokens_before_or_with_their_text(loaded_runtime):
    result, deltas = streamed(loaded_runtime, ChatGenerateParams("lp", QUESTION, max_tokens=16, temperature=0.0, logprobs=2))
    assert len(result.logprobs) == result.stats.completion_tokens > 8
    assert "".join(e.text for e in result.logprobs) == result.text
    sent = [e for d in deltas for e in d.get("logprobs", [])]
    assert [e["token_id"] for e in sent] == [e.token_id for e in result.logprobs]
    assert [e["logprob"] for e in sent] == [e.logprob for e in result.logprobs]
    text_so_far, tokens_so_far = "", ""
    for delta in deltas:  # a token's figures never come after its text
        tokens_so_far += "".join(e["text"] for e in delta.get("logprobs", []))
        text_so_far += delta["text"]
        assert tokens_so_far.startswith(text_so_far)
    plain = loaded_runtime.chat(ChatGenerateParams("lp", QUESTION, max_tokens=16, temperature=0.0), timeout=120)
    assert plain.text == result.text and plain.logprobs == []


def test_a_thinking_reply_reports_its_answers_tokens_only(loaded_runtime):
    result, deltas = streamed(loaded_runtime, ChatGenerateParams("lp-think", QUESTION, max_tokens=100, temperature=0.0, grammar=THINKING, logprobs=1))
    assert result.reasoning and result.text and result.stats.reasoning_tokens > 0
    assert len(result.logprobs) == result.stats.answer_tokens > 0
    assert "".join(e.text for e in result.logprobs).strip() == result.text.strip()
    assert "think" not in "".join(e.text for e in result.logprobs)
    assert [e["token_id"] for d in deltas for e in d.get("logprobs", [])] == [e.token_id for e in result.logprobs]


@pytest.fixture(scope="module")
def drafting_runtime(starter_model):
    """The starter model as its own draft model, drafts of a fixed length (a test-only knob), verified in one pass each."""
    env = dict(os.environ, LOKAL_AUTO_SPECULATION="on", LOKAL_SPECULATIVE_FIXED_K="4")
    client = RuntimeClient(env=env)
    client.initialize("pytest")
    client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=1024, draft_path=str(starter_model)))
    yield client
    client.close()


def test_drafted_tokens_carry_the_figures_plain_decoding_gives_them(drafting_runtime):
    ask = lambda mode: drafting_runtime.chat(ChatGenerateParams("lp-spec", EDIT, max_tokens=40, temperature=0.0, speculation=mode, logprobs=3), timeout=300)
    # The prompt read whole in one pass gives its last row slightly other figures (up to 0.08 here) than the same row
    # read alone; every reply after the first reads just that token again (the cache holds the rest), so the plain
    # reply to compare with is the second.
    ask("off")
    plain = ask("off")
    for mode in ("lookup", "draft"):
        result = ask(mode)
        assert result.stats.draft_tokens_accepted > 0, mode  # tokens really came from accepted drafts
        assert result.text == plain.text
        assert [(e.token_id, [t.token_id for t in e.top]) for e in result.logprobs] == [(e.token_id, [t.token_id for t in e.top]) for e in plain.logprobs]
        # Each verified row is computed as a plain step computes it, to the bit, on this CPU.
        assert [e.logprob for e in result.logprobs] == pytest.approx([e.logprob for e in plain.logprobs], abs=1e-6), mode
        assert [t.logprob for e in result.logprobs for t in e.top] == pytest.approx([t.logprob for e in plain.logprobs for t in e.top], abs=1e-6), mode


def test_a_prompt_scored_across_chunks_puts_each_figure_on_its_own_token(loaded_runtime):
    from runtime.llama.generation import SCORED_PREFILL_CHUNK

    written = loaded_runtime.chat(ChatGenerateParams("lp-long", [], prompt="1, 2, 3,", max_tokens=2 * SCORED_PREFILL_CHUNK + 40, temperature=0.0, logprobs=1), timeout=300)
    scored = loaded_runtime.chat(ChatGenerateParams("lp-long", [], prompt="1, 2, 3," + written.text, max_tokens=0, logprobs=1, prompt_logprobs=True), timeout=300)
    assert scored.text == "" and scored.stats.completion_tokens == 0
    entries = scored.prompt_logprobs
    assert len(entries) == scored.stats.prompt_tokens - 1 > 2 * SCORED_PREFILL_CHUNK  # read in three chunks or more
    n = len(written.logprobs)
    assert [e.token_id for e in entries[-n:]] == [e.token_id for e in written.logprobs]
    # The greedy reply took the likeliest token at each place, across every chunk boundary.
    assert [e.top[0].token_id for e in entries[-n:]] == [e.token_id for e in entries[-n:]]
    assert [e.logprob for e in entries[-n:]] == pytest.approx([e.logprob for e in written.logprobs], abs=0.1)
    again = loaded_runtime.chat(ChatGenerateParams("lp-long", [], prompt="1, 2, 3," + written.text, max_tokens=1, temperature=0.0), timeout=300)
    assert again.stats.prompt_tokens_evaluated == 1  # scoring left the prompt in the cache for the next request


def test_prompt_logprobs_for_a_conversation_are_invalid_params(loaded_runtime):
    params = {"conversation_id": "lp-bad", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1, "prompt_logprobs": True}
    expect_error(loaded_runtime, "chat.generate", params, ErrorCode.INVALID_PARAMS, "params.prompt_logprobs")


@pytest.mark.parametrize("value", [21, -1, "3", 2.5, True])
def test_logprobs_out_of_range_or_of_the_wrong_type_are_invalid_params(loaded_runtime, value):
    params = {"conversation_id": "lp-bad", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1, "logprobs": value}
    expect_error(loaded_runtime, "chat.generate", params, ErrorCode.INVALID_PARAMS, "params.logprobs")
