"""`/tokenize` and `/detokenize` through a real `lokal serve`, as llama-server answers them: the loaded model's own
tokenizer, checked against llama-cpp-python's, and one clear 400 for each kind of bad body, the server serving after."""

import llama_cpp
import pytest

pytestmark = pytest.mark.slow

TEXT = "Selamat pagi — 日本語 <|im_end|>"


def post(served, path, body, **kwargs):
    return served.http("POST", path, body, **kwargs)


def test_tokenize_and_detokenize_speak_the_loaded_model_s_tokens(served, starter_model):
    vocab = llama_cpp.Llama(str(starter_model), vocab_only=True, verbose=False)
    reply = post(served, "/tokenize", {"content": TEXT})
    assert reply.status == 200, reply.body
    ids = reply.json()["tokens"]
    assert ids == vocab.tokenize(TEXT.encode(), add_bos=False, special=True)  # llama-server's default: special names are the tokens
    assert 2 in ids  # SmolLM2's <|im_end|>, read as the token itself
    as_text = post(served, "/tokenize", {"content": TEXT, "parse_special": False}).json()["tokens"]
    assert as_text == vocab.tokenize(TEXT.encode(), add_bos=False, special=False) and 2 not in as_text
    assert post(served, "/tokenize", {"content": TEXT, "add_special": True}).json()["tokens"] == vocab.tokenize(TEXT.encode(), add_bos=True, special=True)
    assert post(served, "/tokenize", {"content": ""}).json() == {"tokens": []}

    pieces = post(served, "/tokenize", {"content": TEXT, "with_pieces": True}).json()["tokens"]
    assert [p["id"] for p in pieces] == ids
    joined = b"".join(bytes(p["piece"]) if isinstance(p["piece"], list) else p["piece"].encode() for p in pieces)
    assert joined.decode() == TEXT  # a piece that is part of a character comes as its bytes, and they add up
    assert any(isinstance(p["piece"], list) for p in pieces)  # this tokenizer splits some of those characters

    assert post(served, "/detokenize", {"tokens": ids}).json() == {"content": TEXT}
    assert post(served, "/detokenize", {"tokens": []}).json() == {"content": ""}


@pytest.mark.parametrize(
    "path, body, named",
    [
        ("/tokenize", {}, "content"),
        ("/tokenize", {"content": 5}, "content"),
        ("/tokenize", {"content": "a", "add_special": "yes"}, "add_special"),
        ("/tokenize", {"content": "a", "model": "x"}, "model"),  # a field it does not take, refused by name
        ("/tokenize", b"[1, 2]", "JSON object"),
        ("/detokenize", {"tokens": [1, "two"]}, "tokens"),
        ("/detokenize", {"tokens": [10**9]}, "tokens"),  # an id the model does not have
        ("/detokenize", {"tokens": [-1]}, "tokens"),
    ],
)
def test_a_bad_body_is_a_400_naming_what_is_wrong_and_the_server_keeps_serving(served, path, body, named):
    reply = post(served, path, body)
    assert reply.status == 400 and named in reply.json()["error"]["message"], reply.body
    assert post(served, "/tokenize", {"content": "still here"}).status == 200


def test_the_key_is_needed(served):
    assert post(served, "/tokenize", {"content": "a"}, key=None).status == 401
    assert post(served, "/detokenize", {"tokens": [1]}, key="wrong").status == 401
