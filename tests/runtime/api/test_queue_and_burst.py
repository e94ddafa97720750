"""One generation at a time: a bounded queue behind it, 429 past it, and a burst that loses nothing."""

import threading
from concurrent.futures import ThreadPoolExecutor

import openai
import pytest

from serve_process import MODEL_NAME

pytestmark = pytest.mark.slow

GREEDY = dict(temperature=0.0, seed=3)
COUNTING = "1, 2, 3, 4, 5,"  # the model counts on for as long as it is let


def test_second_request_waits_and_a_third_gets_429(served):
    client = served.openai()
    # A: a long reply; once its first chunk is here, it holds the runtime.
    long = client.completions.create(model=MODEL_NAME, prompt=COUNTING, max_tokens=900, stream=True, **GREEDY)
    first = next(iter(long))
    assert first.choices[0].text
    assert served.health()["running"] is True

    # B: waits in the queue (of 1) behind A.
    result = {}
    waiter = threading.Thread(target=lambda: result.update(reply=client.completions.create(model=MODEL_NAME, prompt="The sky is", max_tokens=4, **GREEDY)))
    waiter.start()
    served.wait_health(queued=1)

    # C: the queue is full.
    with pytest.raises(openai.RateLimitError) as err:
        client.completions.create(model=MODEL_NAME, prompt="Hello", max_tokens=4)
    assert err.value.status_code == 429 and err.value.response.headers["retry-after"]
    assert err.value.body["code"] == "rate_limit_exceeded"

    # A's reader hangs up: its generation is cancelled, and B gets the runtime.
    long.close()
    waiter.join(timeout=120)
    assert not waiter.is_alive()
    assert result["reply"].choices[0].text and result["reply"].usage.completion_tokens == 4
    health = served.wait_health(running=False, queued=0)
    assert health["status"] == "ready" and served.restarts == 0


def ask(client, topic: str, max_tokens: int = 4):
    return client.chat.completions.create(model=MODEL_NAME, messages=[{"role": "user", "content": f"One word about {topic}."}], max_tokens=max_tokens, **GREEDY)


def test_burst_leaves_the_server_serving_and_loses_no_conversation(served):
    client = served.openai()
    topics = ["rain", "cats", "bread", "ships", "snow"]
    reference = {t: ask(client, t).choices[0].message.content for t in topics}  # one at a time

    def attempt(topic):
        try:
            return topic, ask(client, topic).choices[0].message.content
        except openai.RateLimitError:
            return topic, None

    with ThreadPoolExecutor(len(topics)) as pool:
        outcomes = list(pool.map(attempt, topics))
    answered = {t: text for t, text in outcomes if text is not None}
    refused = [t for t, text in outcomes if text is None]
    assert len(answered) >= 2, outcomes  # the running one and the queued one at least
    assert len(answered) + len(refused) == len(topics)
    # Every answer belongs to its own conversation: nothing mixed up, nothing cut short.
    assert answered == {t: reference[t] for t in answered}
    # The refused ones were told to come back; when they do, they get the same answers.
    for topic in refused:
        assert ask(client, topic).choices[0].message.content == reference[topic]
    health = served.wait_health(running=False, queued=0)
    assert health["status"] == "ready" and served.restarts == 0


def test_a_caller_that_hangs_up_while_queued_leaves_the_queue(served):
    import http.client
    import json

    client = served.openai()
    long = client.completions.create(model=MODEL_NAME, prompt=COUNTING, max_tokens=900, stream=True, **GREEDY)
    next(iter(long))
    body = json.dumps({"model": MODEL_NAME, "prompt": "Hi", "max_tokens": 2}).encode()
    waiting = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    waiting.request("POST", "/v1/completions", body=body, headers={"Authorization": f"Bearer {served.key}", "Content-Type": "application/json"})
    served.wait_health(queued=1)
    waiting.close()  # gone before its turn
    served.wait_health(queued=0)
    # Its place is free again: another caller can wait there (no 429).
    result = {}
    waiter = threading.Thread(target=lambda: result.update(reply=client.completions.create(model=MODEL_NAME, prompt="The sky is", max_tokens=2, **GREEDY)))
    waiter.start()
    served.wait_health(queued=1)
    long.close()
    waiter.join(timeout=120)
    assert result["reply"].usage.completion_tokens == 2
    served.wait_health(running=False, queued=0)
