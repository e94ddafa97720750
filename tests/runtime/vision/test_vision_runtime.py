"""Pictures through the real runtime process: the starter model with the test projector (random weights).

The projector's output is noise to the model, so these tests check positions, caching, batching and
errors, never what a reply says about a picture: reply quality with a real vision model is not
measured here. Greedy throughout, so a reply is a fingerprint of the KV state it was computed from.
"""

from __future__ import annotations

import shutil
import threading

import pytest

from runtime.protocol import ChatGenerateParams, ChatMessage, ErrorCode, KvStoreInfoParams, LogitBias, RpcError, methods
from vision_files import IMAGE_TOKENS, add_picture, png, seeing_runtime, write_projector
from waiting import wait_until

pytestmark = pytest.mark.slow

QUESTION = "What is in this picture? Answer in one sentence."


def ask(client, messages, conversation="a", max_tokens=8, **params):
    params.setdefault("speculation", "off")  # the replies compared are computed alike (test_warm_conversations.py)
    return client.chat(ChatGenerateParams(conversation, messages, max_tokens=max_tokens, temperature=0.0, **params), timeout=180)


@pytest.fixture(scope="module")
def client(starter_model, projector_file):
    with seeing_runtime(starter_model, projector_file) as client:
        yield client


def test_the_model_loads_with_its_projector_and_says_it_can_see(client):
    assert client.loaded.vision is True


def test_a_picture_takes_its_positions_in_the_prompt(client):
    picture = add_picture(client, png(seed=1))
    text_only = ask(client, [ChatMessage("user", QUESTION)], conversation="positions-text")
    one = ask(client, [ChatMessage("user", QUESTION, attachments=[picture])], conversation="positions-one")
    two = ask(client, [ChatMessage("user", QUESTION, attachments=[picture, add_picture(client, png(seed=2))])], conversation="positions-two")
    assert (text_only.stats.prompt_image_positions, one.stats.prompt_image_positions, two.stats.prompt_image_positions) == (0, IMAGE_TOKENS, 2 * IMAGE_TOKENS)
    # Each picture adds its positions and the projector's text around it (Gemma 3's <start_of_image> ... <end_of_image>).
    wrapper = one.stats.prompt_tokens - text_only.stats.prompt_tokens - IMAGE_TOKENS
    assert wrapper > 0
    assert two.stats.prompt_tokens == text_only.stats.prompt_tokens + 2 * (IMAGE_TOKENS + wrapper)
    assert one.text and one.finish_reason in ("stop", "length")


def test_the_same_picture_in_the_next_turn_reuses_its_cached_positions(client):
    picture = add_picture(client, png(seed=3))
    turn1 = [ChatMessage("user", QUESTION, attachments=[picture])]
    first = ask(client, turn1, conversation="reuse")
    # Another conversation's cache may hold the template's start, never this picture: it is evaluated.
    assert first.stats.prompt_tokens_evaluated >= IMAGE_TOKENS + 10
    turn2 = [*turn1, ChatMessage("assistant", first.text), ChatMessage("user", "And what colours does it have?")]
    second = ask(client, turn2, conversation="reuse")
    s = second.stats
    assert s.prompt_image_positions == IMAGE_TOKENS
    assert s.prompt_tokens_reused >= first.stats.prompt_tokens  # the picture's positions too: not evaluated again
    assert s.prompt_tokens_evaluated < 30
    # The same bytes sent again (another attachment.add, another name) are the same picture: still reused.
    again = add_picture(client, png(seed=3), name="copy.png")
    assert again.id == picture.id
    # Another picture in its place is evaluated afresh from where the pictures differ.
    other = [ChatMessage("user", QUESTION, attachments=[add_picture(client, png(seed=4))]), *turn2[1:]]
    changed = ask(client, other, conversation="reuse")
    assert changed.stats.prompt_tokens_evaluated >= IMAGE_TOKENS + 10
    assert changed.stats.prompt_tokens_reused < first.stats.prompt_tokens - IMAGE_TOKENS


def test_a_reply_with_a_picture_is_decoded_while_another_reply_streams(starter_model, projector_file):
    """Two seats, one llama_decode call per sequence (LOKAL_BATCH=single) so a reply can be compared byte for byte
    with the same reply in a process of its own: the picture's reply is read and answered while a long reply
    streams in the other seat, and comes out as it does alone."""
    env = {"LOKAL_BATCH": "single", "LOKAL_KV_STORE": "off"}  # each process computes the picture itself
    messages = [ChatMessage("system", "You describe pictures for a museum."), ChatMessage("user", QUESTION)]
    with seeing_runtime(starter_model, projector_file, env=env) as client:
        alone = ask(client, [messages[0], ChatMessage("user", QUESTION, attachments=[add_picture(client, png(seed=5))])], conversation="alone", max_tokens=12)
    with seeing_runtime(starter_model, projector_file, env=env) as client:
        picture = add_picture(client, png(seed=5))
        streaming = threading.Event()
        long_params = ChatGenerateParams("long", [ChatMessage("user", "Count from one to one thousand in words.")], max_tokens=600, temperature=0.0)
        # It may not stop early: SmolLM2's <|endoftext|>, <|im_start|> and <|im_end|> are banned.
        long_params.logit_bias = [LogitBias(token, -100.0) for token in (0, 1, 2)]
        long_call, long_wait = client.generate(long_params, on_text=lambda _text: streaming.set())
        wait_until(streaming.is_set, 120, "the long reply streams")
        with_picture = ask(client, [messages[0], ChatMessage("user", QUESTION, attachments=[picture])], conversation="picture", max_tokens=12)
        assert not long_call.future.done(), "the long reply was still streaming when the picture's reply ended"
        client.cancel(long_call.id)
        long_reply = long_wait(60)
    assert long_reply.finish_reason == "cancelled" and long_reply.stats.completion_tokens > 0
    assert with_picture.stats.prompt_image_positions == IMAGE_TOKENS
    assert with_picture.stats.prompt_tokens_evaluated == with_picture.stats.prompt_tokens
    assert with_picture.text == alone.text


def test_a_saved_state_restores_a_turn_with_a_picture(starter_model, projector_file, tmp_path):
    first_dir, restart_dir, other_dir = tmp_path / "first", tmp_path / "restart", tmp_path / "other"
    env = lambda cache: {"LOKAL_CACHE_DIR": str(cache), "LOKAL_KV_MIN_TOKENS": "16", "LOKAL_KV_STORE": "on"}
    data = png(seed=6)
    with seeing_runtime(starter_model, projector_file, env=env(first_dir)) as client:
        turn1 = [ChatMessage("user", QUESTION, attachments=[add_picture(client, data)])]
        first = ask(client, turn1)
        info = client.request(methods.KV_STORE_INFO, KvStoreInfoParams(wait_for_writes=True), timeout=60)
        assert info.entries == 1 and info.pending_writes == 0
        shutil.copytree(first_dir / "kv", restart_dir / "kv")  # the store as it was after turn 1
        turn2 = [*turn1, ChatMessage("assistant", first.text), ChatMessage("user", "Is it a photograph?")]
        warm = ask(client, turn2, max_tokens=16)
    shutil.copytree(restart_dir / "kv", other_dir / "kv")
    with seeing_runtime(starter_model, projector_file, env=env(restart_dir)) as client:  # a new process: nothing in RAM
        add_picture(client, data)
        restored = ask(client, turn2, max_tokens=16)
    # Another projector makes other positions of the same picture: its states are never candidates.
    other_projector = write_projector(tmp_path / "mmproj-other.gguf", seed=1)
    with seeing_runtime(starter_model, other_projector, env=env(other_dir)) as client:
        add_picture(client, data)
        elsewhere = ask(client, turn2, max_tokens=16)
    assert elsewhere.stats.prompt_tokens_restored == 0 and elsewhere.stats.kv_restore_source == ""
    s = restored.stats
    assert s.kv_restore_source == "disk"
    assert s.prompt_tokens_restored >= first.stats.prompt_tokens  # the picture's positions came from the state
    assert s.prompt_image_positions == IMAGE_TOKENS
    assert s.prompt_tokens_evaluated == warm.stats.prompt_tokens_evaluated
    assert restored.text == warm.text


def test_a_broken_picture_is_refused_with_a_clear_error_and_the_runtime_keeps_serving(client):
    whole = png(seed=7)
    cases = {
        "truncated": (whole[:60], "broken or truncated"),
        "not a picture": (b"%PDF-1.7 this is no picture at all", "not an image in a supported format"),
        "webp": (b"RIFF\x10\x00\x00\x00WEBPVP8 " + bytes(16), "image/webp"),
    }
    for name, (data, says) in cases.items():
        picture = add_picture(client, data, name=f"{name}.png", mime="image/png")
        with pytest.raises(RpcError) as refused:
            ask(client, [ChatMessage("user", QUESTION, attachments=[picture])], conversation="broken")
        assert refused.value.code == ErrorCode.INVALID_PARAMS, name
        assert says in refused.value.message, (name, refused.value.message)
    unknown = add_picture(client, whole)
    unknown.id = "0" * 64
    with pytest.raises(RpcError) as refused:
        ask(client, [ChatMessage("user", QUESTION, attachments=[unknown])], conversation="broken")
    assert "no image is stored with id" in refused.value.message
    fine = ask(client, [ChatMessage("user", QUESTION, attachments=[add_picture(client, whole)])], conversation="broken")
    assert fine.stats.prompt_image_positions == IMAGE_TOKENS


def test_a_picture_sent_to_a_model_that_cannot_see_is_refused_saying_so(loaded_runtime):
    picture = add_picture(loaded_runtime, png(seed=8))
    with pytest.raises(RpcError) as refused:
        ask(loaded_runtime, [ChatMessage("user", QUESTION, attachments=[picture])])
    assert refused.value.code == ErrorCode.INVALID_PARAMS
    assert "cannot see images" in refused.value.message
    assert ask(loaded_runtime, [ChatMessage("user", QUESTION)]).text  # text still works


def test_a_projector_for_another_model_is_refused_at_load(runtime, starter_model, tmp_path):
    from runtime.protocol import ModelLoadParams

    wrong = write_projector(tmp_path / "mmproj-wrong-width.gguf", text_width=64)
    with pytest.raises(RpcError) as refused:
        runtime.load_model(ModelLoadParams(path=str(starter_model), n_ctx=256, n_seq=1, mmproj_path=str(wrong)))
    assert refused.value.code == ErrorCode.INVALID_MODEL
    assert "mmproj-wrong-width.gguf cannot be used with this model" in refused.value.message and "576" in refused.value.message
    with pytest.raises(RpcError) as missing:
        runtime.load_model(ModelLoadParams(path=str(starter_model), n_ctx=256, n_seq=1, mmproj_path=str(tmp_path / "nothing.gguf")))
    assert missing.value.code == ErrorCode.MODEL_NOT_FOUND and "mmproj_path" in missing.value.message
