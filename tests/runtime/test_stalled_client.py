"""A client that stops reading the runtime's stdout: its own reply is dropped, and nothing else stalls.

A real runtime process with two sequences: the protocol client's reply streams
counting while the client's reader thread is held (as a GUI thread that blocks
would hold it), and its pipe, shrunk to one page, fills after a few dozen lines.
Then an API client streams its own reply over HTTP. Before the output went
through a queue, the engine thread blocked writing to the full pipe and the
API's reply never got a step.
"""

from __future__ import annotations

import array
import fcntl
import os
import termios
import threading

import openai
import pytest

from runtime.api.backend import model_name
from runtime.client import RuntimeClient
from runtime.output_writer import STREAM_LIMIT_ENV
from runtime.protocol import ApiStartParams, ChatGenerateParams, ChatMessage, ErrorCode, ModelLoadParams, RpcError, methods
from waiting import wait_until

pytestmark = pytest.mark.slow

COUNTING = "1, 2, 3, 4, 5,"  # the model counts on for as long as it is let
GREEDY = dict(temperature=0.0, seed=5)
UNREAD_LINES = 32
PIPE_SIZE = 4096  # a page: the smallest pipe there is


def unread_bytes(client: RuntimeClient) -> int:
    """Bytes the runtime wrote to its stdout that the client has not read."""
    count = array.array("i", [0])
    fcntl.ioctl(client.process.stdout.fileno(), termios.FIONREAD, count)
    return count[0]


@pytest.fixture
def stalling(starter_model):
    # Plain decoding: one token, one line a step for each reply, so the client's reply has sent more than
    # UNREAD_LINES lines into the full pipe (and is dropped) before the API's longer reply is over.
    client = RuntimeClient(env={**os.environ, STREAM_LIMIT_ENV: str(UNREAD_LINES), "LOKAL_AUTO_SPECULATION": "off"})
    try:
        client.initialize("pytest")
        client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=1024, n_threads=1, n_seq=2), timeout=300)
        started = client.request(methods.API_START, ApiStartParams(port=0), timeout=60)
        with open(started.key_file, encoding="utf-8") as f:
            api = openai.OpenAI(base_url=started.url, api_key=f.read().strip(), max_retries=0, timeout=120)
        fcntl.fcntl(client.process.stdout.fileno(), fcntl.F_SETPIPE_SZ, PIPE_SIZE)  # the smallest pipe: it fills in moments
        yield client, api, model_name(str(starter_model))
    finally:
        client.close()


def test_a_client_that_stops_reading_has_its_reply_dropped_while_the_api_streams_on(stalling):
    client, api, model = stalling
    reading_stopped, read_again = threading.Event(), threading.Event()

    def stop_reading(_text: str) -> None:  # called on the client's reader thread: while it waits, stdout is not read
        reading_stopped.set()
        read_again.wait(300)

    call, wait = client.generate(ChatGenerateParams("stalled", [], prompt=COUNTING, max_tokens=900, **GREEDY), stop_reading)
    try:
        assert reading_stopped.wait(120), "the client's reply never streamed"
        wait_until(lambda: unread_bytes(client) >= PIPE_SIZE - 256, 300, "the client's pipe filling up")  # the runtime's writes now block
        texts: list[str] = []
        reasons: list[str] = []
        finished = threading.Event()

        def stream_from_the_api() -> None:
            stream = api.completions.create(model=model, prompt=COUNTING, max_tokens=3 * UNREAD_LINES, stream=True, **GREEDY)
            for chunk in stream:
                texts.append(chunk.choices[0].text)
                if chunk.choices[0].finish_reason is not None:
                    reasons.append(chunk.choices[0].finish_reason)
                    finished.set()

        threading.Thread(target=stream_from_the_api, daemon=True).start()
        wait_until(finished.is_set, 240, "the API's reply ending while the protocol client did not read")
    finally:
        read_again.set()
    assert reasons == ["length"] and "".join(texts).strip()  # the API's whole reply came, while the client's pipe stayed full
    with pytest.raises(RpcError) as dropped:
        wait(60)
    assert dropped.value.code == ErrorCode.OUTPUT_STALLED and "stopped reading" in dropped.value.message
    # The runtime goes on serving the client once it reads again.
    result = client.chat(ChatGenerateParams("after", [ChatMessage("user", "Hi")], max_tokens=4, **GREEDY), timeout=120)
    assert result.finish_reason in ("stop", "length") and result.stats.completion_tokens > 0
