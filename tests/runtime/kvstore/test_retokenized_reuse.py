"""A follow-up after a code reply reuses the whole reply, although its text re-tokenizes to other ids.

SmolLM2's tokenizer splits this reply's text differently from the ids the model
generated. The follow-up must still evaluate only its new message and the
template's tokens: through the live cache, after a restore from RAM (the model
loaded again in the same process) and after a restore from disk (a new process).
Greedy, the real runtime process and the real starter model.
"""

import os
import shutil
import types
from contextlib import contextmanager

import pytest

from runtime.client import RuntimeClient
from runtime.protocol import ChatGenerateParams, ChatMessage, KvStoreInfoParams, ModelLoadParams, methods

pytestmark = pytest.mark.slow

N_CTX = 1024
CODE_REQUEST = ("user", "Write a Python script that counts word frequencies in a text file and prints the top 10.")
FOLLOW_UP = ("user", "Thanks.")
# "<|im_end|>\n<|im_start|>user\n" + "Thanks." + "<|im_end|>\n<|im_start|>assistant\n" is 12 tokens; the next-turn
# header is prefilled after the reply, so fewer are left to evaluate. Before the fix: 98.
MOST_EVALUATED = 12


@contextmanager
def runtime_with_store(cache_dir, model):
    env = dict(os.environ, LOKAL_CACHE_DIR=str(cache_dir), LOKAL_KV_MIN_TOKENS="16", LOKAL_KV_STORE="on")
    client = RuntimeClient(env=env)
    try:
        client.initialize("pytest")
        client.load_model(ModelLoadParams(path=str(model), n_ctx=N_CTX))
        yield client
    finally:
        client.close()


def ask(client, messages, max_tokens):
    # Without speculation: which drafts are verified depends on timed passes, and a batch of several tokens is not
    # rounded as one token alone, so the replies compared could be computed differently (test_warm_conversations.py).
    params = ChatGenerateParams("code", [ChatMessage(r, c) for r, c in messages], max_tokens=max_tokens, temperature=0.0, speculation="off")
    return client.chat(params, timeout=300)


def canonical_prompt_length(model_path, messages) -> int:
    """How many ids the rendered history tokenizes to, the reply's text tokenized afresh (as the runtime renders it)."""
    from runtime.engine.chat_template import ChatTemplate
    from runtime.engine.engine import tokenize_rendered
    from runtime.llama.llama_model import LlamaModel, LoadSettings
    from runtime.gguf.reader import read_file_header

    header = read_file_header(str(model_path))
    llama = LlamaModel(LoadSettings(str(model_path), 64, 0, "f16", "f16", None, 1), header)
    try:
        template = ChatTemplate(header.chat_template, llama.token_text(llama.bos_token), llama.token_text(llama.eos_token))
        text = template.render([{"role": r, "content": c} for r, c in messages], add_generation_prompt=True)
        return len(tokenize_rendered(types.SimpleNamespace(template=template, llama=llama), text))
    finally:
        llama.close()


def assert_only_the_new_turn_evaluated(reply, follow_up):
    s = follow_up.stats
    assert s.prompt_tokens_reused + s.prompt_tokens_restored >= reply.stats.prompt_tokens + reply.stats.completion_tokens
    assert s.prompt_tokens_evaluated <= MOST_EVALUATED, s
    assert s.prompt_tokens_reused + s.prompt_tokens_restored + s.prompt_tokens_evaluated == s.prompt_tokens


def test_a_code_reply_is_reused_whole_live_from_ram_and_from_disk(starter_model, tmp_path):
    first_dir, restart_dir = tmp_path / "first", tmp_path / "restart"
    with runtime_with_store(first_dir, starter_model) as client:
        reply = ask(client, [CODE_REQUEST], max_tokens=200)
        history = [CODE_REQUEST, ("assistant", reply.text), FOLLOW_UP]
        client.request(methods.KV_STORE_INFO, KvStoreInfoParams(wait_for_writes=True), timeout=60)
        shutil.copytree(first_dir / "kv", restart_dir / "kv")  # the store as it was after the reply

        live = ask(client, history, max_tokens=4)
        assert live.stats.prompt_tokens_restored == 0
        assert_only_the_new_turn_evaluated(reply, live)
        # The case this test is about: the reply's text does not tokenize back to the generated ids, so the
        # prompt spelled with them has another length. (If a change of model or llama.cpp makes it tokenize
        # back, pick a request whose reply does not.)
        assert live.stats.prompt_tokens != canonical_prompt_length(starter_model, history), "the reply re-tokenizes to its own ids: pick another request"

        # The model loaded again: its cache is empty, the saved state is still in RAM.
        client.request(methods.MODEL_UNLOAD, timeout=60)
        client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=N_CTX))
        from_ram = ask(client, history, max_tokens=4)
        assert from_ram.stats.kv_restore_source == "ram"
        assert_only_the_new_turn_evaluated(reply, from_ram)

    with runtime_with_store(restart_dir, starter_model) as client:  # a new process: nothing in RAM
        from_disk = ask(client, history, max_tokens=4)
    assert from_disk.stats.kv_restore_source == "disk"
    assert_only_the_new_turn_evaluated(reply, from_disk)
    assert from_disk.text == live.text


# ---- the alignment itself, over a toy vocabulary ---------------------------------
VOCAB = {1: b"<s>", 2: b"ab", 3: b"a", 4: b"b", 5: b"c", 6: b"bc", 7: b"<end>", 8: b"d"}


def spell(ids):
    return b"".join(VOCAB[i] for i in ids)


def test_align_spells_the_same_text_with_the_cached_ids():
    from runtime.llama.token_alignment import align

    cached = [1, 3, 4, 5, 7]  # "<s>" "a" "b" "c" "<end>": how the model generated it
    prompt = [1, 2, 5, 7, 8]  # the same text tokenized afresh ("ab" "c"), then something new
    aligned = align(cached, prompt, VOCAB.__getitem__)
    assert aligned == [1, 3, 4, 5, 7, 8]
    assert spell(aligned) == spell(prompt)


def test_align_stops_where_the_text_changes_and_only_at_a_shared_boundary():
    from runtime.llama.token_alignment import align

    # "<s>abc" cached as <s> a b c; the prompt says "<s>abd": the cached ids serve up to "ab".
    aligned = align([1, 3, 4, 5], [1, 2, 8], VOCAB.__getitem__)
    assert aligned == [1, 3, 4, 8]
    assert spell(aligned) == b"<s>abd"
    # Cached as <s> a bc: past "a" the prompt's "ab" and the cache's "bc" share no boundary before the text parts.
    assert align([1, 3, 6], [1, 2, 8], VOCAB.__getitem__) == [1, 2, 8]
    assert align([1, 5], [1, 2], VOCAB.__getitem__) == [1, 2]  # nothing in common past the first id
    assert align([1, 2], [1, 2, 5], VOCAB.__getitem__) == [1, 2, 5]  # a plain prefix: nothing to do
