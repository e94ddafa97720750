"""Several API replies stream at once (decoded in the same batches), each complete, with the queue past them."""

import threading
import time

import openai
import pytest

from serve_process import MODEL_NAME, Served
from waiting import wait_until

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def parallel(starter_model):
    server = Served("--n-threads", "1", "--parallel", "2", "--max-queue", "1", model=str(starter_model))
    server.wait_ready()
    yield server
    assert server.close() == 0


def test_two_streams_at_once_a_third_waits_and_a_fourth_gets_429(parallel):
    client = parallel.openai()
    arrivals: dict[int, list[float]] = {0: [], 1: []}
    replies: dict[int, str] = {}

    def stream(i, topic):
        pieces = []
        for chunk in client.chat.completions.create(model=MODEL_NAME, messages=[{"role": "user", "content": f"Write a long story about {topic}."}], max_tokens=64, temperature=0.0, stream=True):
            if chunk.choices and chunk.choices[0].delta.content:
                arrivals[i].append(time.perf_counter())
                pieces.append(chunk.choices[0].delta.content)
        replies[i] = "".join(pieces)

    threads = [threading.Thread(target=stream, args=(i, topic)) for i, topic in enumerate(["a lighthouse", "a dragon"])]
    for t in threads:
        t.start()
    parallel.wait_health(running=True)
    wait_until(lambda: arrivals[0] and arrivals[1], 120, "the two replies streaming together")
    # A third waits in the queue (of 1) behind the two; a fourth is refused.
    waiter = {}
    third = threading.Thread(target=lambda: waiter.update(reply=client.completions.create(model=MODEL_NAME, prompt="The sky is", max_tokens=4, temperature=0.0)))
    third.start()
    try:
        parallel.wait_health(queued=1)
        with pytest.raises(openai.RateLimitError):
            client.completions.create(model=MODEL_NAME, prompt="Hello", max_tokens=4)
    finally:
        for t in threads + [third]:
            t.join(180)
    assert replies[0] and replies[1] and waiter["reply"].choices[0].text
    # They streamed together: each had text before the other was done.
    assert arrivals[0][0] < arrivals[1][-1] and arrivals[1][0] < arrivals[0][-1]
