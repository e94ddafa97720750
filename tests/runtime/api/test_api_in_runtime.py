"""`api.start` / `api.stop`: the API served from inside a runtime process, sharing its engine with the protocol client."""

import socket
import threading

import openai
import pytest

from runtime.client import RuntimeClient
from runtime.protocol import ApiStartParams, ChatGenerateParams, ChatMessage, ErrorCode, KvStoreInfoParams, ModelLoadParams, RpcError, methods
from serve_process import MODEL_NAME

pytestmark = pytest.mark.slow

COUNTING = "1, 2, 3, 4, 5,"  # the model counts on for as long as it is let
GREEDY = dict(temperature=0.0, seed=5)


class Api:
    """The API of one runtime process: where it listens and an openai client for it."""

    def __init__(self, client: RuntimeClient, **params):
        self.started = client.request(methods.API_START, ApiStartParams(port=0, **params), timeout=60)
        self.url = self.started.url
        with open(self.started.key_file, encoding="utf-8") as f:
            self.key = f.read().strip()

    def openai(self):
        return openai.OpenAI(base_url=self.url, api_key=self.key, max_retries=0, timeout=120)

    def status(self, path: str = "/health", body: dict | None = None) -> tuple[int, dict]:
        import http.client
        import json

        connection = http.client.HTTPConnection("127.0.0.1", self.started.port, timeout=60)
        try:
            headers = {"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"}
            connection.request("POST" if body else "GET", path, body=json.dumps(body) if body else None, headers=headers)
            response = connection.getresponse()
            return response.status, json.loads(response.read())
        finally:
            connection.close()


@pytest.fixture(scope="module")
def served(starter_model):
    client = RuntimeClient()
    client.initialize("pytest")
    client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=1024, n_threads=1))
    api = Api(client, max_queue=1)
    yield client, api
    assert client.request(methods.API_STOP, timeout=30).stopped is True
    client.close()


def test_api_start_refuses_the_network_and_a_taken_port_and_answers_503_without_a_model(runtime):
    with pytest.raises(RpcError) as err:
        runtime.request(methods.API_START, ApiStartParams(host="0.0.0.0", port=0), timeout=30)
    assert err.value.code == ErrorCode.INVALID_PARAMS and "allow" in err.value.message
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(RpcError) as err:
            runtime.request(methods.API_START, ApiStartParams(port=taken.getsockname()[1]), timeout=30)
        assert err.value.code == ErrorCode.LISTEN_FAILED
    api = Api(runtime)
    assert api.started.host == "127.0.0.1" and api.started.model is None
    status, health = api.status()
    assert status == 503 and health["status"] == "no_model"
    status, body = api.status("/v1/chat/completions", {"model": MODEL_NAME, "messages": [{"role": "user", "content": "Hi"}]})
    assert status == 503 and body["error"]["code"] == "model_unavailable"
    for path, body in (("/tokenize", {"content": "Hi"}), ("/detokenize", {"tokens": [1]})):  # no tokenizer without a model
        status, body = api.status(path, body)
        assert status == 503 and body["error"]["code"] == "model_unavailable"
    assert runtime.request(methods.API_STOP, timeout=30).stopped is True
    with pytest.raises(ConnectionRefusedError):
        api.status()


def test_an_api_caller_never_gets_the_windows_cache_nor_the_reverse_and_its_own_reuse_stays(served):
    client, api = served
    system = "You are a careful assistant for a small bakery. You answer questions about opening hours, bread and cakes, politely and in one short sentence."
    window = [ChatMessage("system", system), ChatMessage("user", "Do you sell rye bread on Sundays?")]
    turn = client.chat(ChatGenerateParams("window-conversation", window, max_tokens=8, **GREEDY))
    client.request(methods.KV_STORE_INFO, KvStoreInfoParams(wait_for_writes=True), timeout=60)  # its state is saved too
    assert turn.stats.prompt_tokens >= 40
    # A caller who guesses the window conversation's prefix learns nothing from the cache: neither the live
    # sequence nor the saved state serves it.
    guessed = [{"role": "system", "content": system}, {"role": "user", "content": "Do you sell rye bread on Sundays?"}]
    first = api.openai().chat.completions.create(model=MODEL_NAME, messages=guessed, max_tokens=8, **GREEDY)
    assert first.usage.prompt_tokens_details.cached_tokens == 0
    # The API's own prefix reuse across its own requests stays.
    follow_up = guessed + [{"role": "assistant", "content": first.choices[0].message.content}, {"role": "user", "content": "And on Mondays?"}]
    second = api.openai().chat.completions.create(model=MODEL_NAME, messages=follow_up, max_tokens=8, **GREEDY)
    assert second.usage.prompt_tokens_details.cached_tokens >= first.usage.prompt_tokens
    # Nor the reverse: the window gets nothing of a conversation only the API had.
    api_only = [{"role": "system", "content": "You are a ferry timetable. You answer with departure times only, nothing else."}, {"role": "user", "content": "When does the first ferry leave on Saturdays?"}]
    api.openai().chat.completions.create(model=MODEL_NAME, messages=api_only, max_tokens=4, **GREEDY)
    client.request(methods.KV_STORE_INFO, KvStoreInfoParams(wait_for_writes=True), timeout=60)
    again = client.chat(ChatGenerateParams("window-copy-of-the-api", [ChatMessage(m["role"], m["content"]) for m in api_only], max_tokens=4, **GREEDY))
    assert again.stats.prompt_tokens_reused == 0 and again.stats.prompt_tokens_restored == 0


def test_a_client_reply_streams_beside_an_api_reply(served):
    client, api = served
    waiting = threading.Event()
    client.add_notification_handler(lambda method, _params: method == "job.waiting" and waiting.set())
    stream = api.openai().completions.create(model=MODEL_NAME, prompt=COUNTING, max_tokens=900, stream=True, **GREEDY)
    chunks = iter(stream)
    assert next(chunks).choices[0].text
    result = client.chat(ChatGenerateParams("beside-the-api", [ChatMessage("user", "Hi")], max_tokens=4, **GREEDY), timeout=120)
    assert result.finish_reason != "cancelled" and result.stats.completion_tokens > 0
    assert next(chunks).choices[0].text  # the API's reply still streams
    assert not waiting.is_set()
    stream.close()


@pytest.fixture(scope="module")
def one_sequence(starter_model):
    """A runtime whose context holds one sequence: the client's reply waits for the API's."""
    client = RuntimeClient()
    client.initialize("pytest")
    client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=1024, n_threads=1, n_seq=1))
    api = Api(client, max_queue=1)
    yield client, api
    assert client.request(methods.API_STOP, timeout=30).stopped is True
    client.close()


def test_with_one_sequence_a_client_job_waits_for_the_api_reply_instead_of_failing(one_sequence):
    client, api = one_sequence
    waiting = threading.Event()
    client.add_notification_handler(lambda method, _params: method == "job.waiting" and waiting.set())
    stream = api.openai().completions.create(model=MODEL_NAME, prompt=COUNTING, max_tokens=900, stream=True, **GREEDY)
    assert next(iter(stream)).choices[0].text
    _call, wait = client.generate(ChatGenerateParams("waits-behind-the-api", [ChatMessage("user", "Hi")], max_tokens=4, **GREEDY))
    assert waiting.wait(30), "no job.waiting notification"
    assert client.metrics().generation is None  # the figures streaming now are the API's, not this client's
    stream.close()  # the API's caller hangs up: its reply stops, the client's runs
    result = wait(120)
    assert result.finish_reason != "cancelled" and result.stats.completion_tokens > 0


def test_cancelling_a_client_job_that_waits_ends_it_at_once(one_sequence):
    client, api = one_sequence
    stream = api.openai().completions.create(model=MODEL_NAME, prompt=COUNTING, max_tokens=900, stream=True, **GREEDY)
    next(iter(stream))
    call, wait = client.generate(ChatGenerateParams("cancelled-while-waiting", [ChatMessage("user", "Hi")], max_tokens=4))
    assert client.cancel(call.id)
    result = wait(30)
    assert result.finish_reason == "cancelled" and result.text == ""
    stream.close()


def test_a_model_load_behind_an_api_reply_makes_new_requests_503_until_it_is_done(served, starter_model):
    client, api = served
    stream = api.openai().completions.create(model=MODEL_NAME, prompt=COUNTING, max_tokens=900, stream=True, **GREEDY)
    next(iter(stream))
    waiting, load_waits = [], threading.Event()
    client.add_notification_handler(lambda method, params: method == "job.waiting" and (waiting.append(params["request_id"]), load_waits.set()))
    load = client.start(methods.MODEL_LOAD, ModelLoadParams(path=str(starter_model), n_ctx=1024, n_threads=1))
    # The load waits for the API's reply (the runtime says so), so this is deterministic: the model is "loading" for new requests.
    assert load_waits.wait(30) and waiting == [load.id], waiting
    status, health = api.status()
    assert status == 503 and health["status"] == "loading"
    with pytest.raises(openai.APIStatusError) as err:
        api.openai().completions.create(model=MODEL_NAME, prompt="Hi", max_tokens=1)
    assert err.value.status_code == 503 and err.value.body["code"] == "model_loading"
    stream.close()
    load.result(120)
    assert api.openai().completions.create(model=MODEL_NAME, prompt="Hi", max_tokens=1).usage.completion_tokens == 1
