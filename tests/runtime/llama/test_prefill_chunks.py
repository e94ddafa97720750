"""How a new prompt joins a batch that streams (generation.decode_step), with the real starter model.

A prompt that comes while another reply streams is read in chunks, so that reply
gets a token every step; prompts sent together are one wave, read whole, even if
one of them was admitted a step before the others.
"""

from __future__ import annotations

import time

import pytest

from runtime.llama.generation import DECODING, PREFILL_CHUNK_WHILE_STREAMING, PREFILLING, GenerationRequest, ReplyRun, plain_stepper, decode_step
from runtime.llama.llama_model import LlamaModel, LoadSettings
from runtime.llama.sampling import SamplingConfig
from runtime.gguf.reader import read_file_header
from runtime.protocol import GenerationStats

GREEDY = SamplingConfig(temperature=0.0, top_p=1.0, top_k=40, seed=0)
LONG = "Summarise this list of facts about rivers. " + " ".join(f"River number {i} is long and it flows to the sea." for i in range(20))


@pytest.fixture(scope="module")
def model(starter_model):
    settings = LoadSettings(path=str(starter_model), n_ctx=2048, n_gpu_layers=0, type_k="f16", type_v="f16", flash_attn=None, n_threads=1, n_seq=2)
    llama = LlamaModel(settings, read_file_header(starter_model))
    yield llama
    llama.close()


def run(model, seq_id: int, text: str, started: float | None = None) -> ReplyRun:
    seq = model.sequences[seq_id]
    seq.clear()
    prompt = model.tokenize(f"<|im_start|>user\n{text}<|im_end|>\n<|im_start|>assistant\n", add_bos=False, special=True)
    request = GenerationRequest(prompt=prompt, max_tokens=40, sampling=GREEDY, on_text=lambda _t: None)
    reply = ReplyRun(seq, request, GenerationStats(), plain_stepper, started=started)
    reply.prepare(prompt)
    return reply


def streamed(reply: ReplyRun) -> int:
    return len(reply.sink.completion)


def test_a_prompt_that_comes_while_another_streams_joins_in_chunks(model):
    first = run(model, 0, "Count from one to twenty.")
    decode_step([first])
    assert first.phase == DECODING
    late = run(model, 1, LONG)  # sent after the first reply began to stream
    assert len(late.to_prefill) > 2 * PREFILL_CHUNK_WHILE_STREAMING
    steps = 0
    while late.phase == PREFILLING:
        before, left = streamed(first), len(late.to_prefill)
        decode_step([first, late])
        steps += 1
        assert left - len(late.to_prefill) <= PREFILL_CHUNK_WHILE_STREAMING or late.phase == DECODING
        assert streamed(first) == before + 1, "the streaming reply missed a step while the prompt was read"
    assert steps >= 3


def test_prompts_sent_together_are_read_as_one_wave(model):
    sent = time.perf_counter()
    first = run(model, 0, "Count from one to twenty.", started=sent)
    decode_step([first])  # admitted alone: the other request was still on its way into the engine
    assert first.phase == DECODING
    second = run(model, 1, LONG, started=sent)
    assert len(second.to_prefill) > 2 * PREFILL_CHUNK_WHILE_STREAMING
    before = streamed(first)
    decode_step([first, second])
    assert second.phase == DECODING and not second.to_prefill  # its whole prompt in one step
    assert streamed(first) == before + 1
