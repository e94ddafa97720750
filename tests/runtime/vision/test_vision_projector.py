"""The projector in-process beside the starter model: a picture evaluated into a sequence at its position."""

from __future__ import annotations

import hashlib

import pytest

from runtime.gguf.reader import read_file_header
from runtime.llama.generation import GenerationRequest, generate
from runtime.llama.llama_model import LlamaModel, LoadSettings
from runtime.llama.sampling import SamplingConfig
from runtime.vision import projector as projector_module
from runtime.vision.positions import image_token
from runtime.vision.projector import Projector
from vision_files import IMAGE_TOKENS, png

pytestmark = pytest.mark.slow

GREEDY = SamplingConfig(temperature=0.0, top_p=1.0, top_k=40, seed=0)


@pytest.fixture
def model(starter_model, projector_file):
    settings = LoadSettings(path=str(starter_model), n_ctx=1024, n_gpu_layers=0, type_k="f16", type_v="f16", flash_attn=None, n_threads=1, n_seq=1)
    llama = LlamaModel(settings, read_file_header(starter_model))
    llama.projector = Projector(str(projector_file), llama.model_pointer, 1, use_gpu=False)
    yield llama
    llama.close()


def prompt_with(model, pictures: list[bytes]) -> list[int]:
    tokens = model.tokenize("<|im_start|>user\n", add_bos=False, special=True)
    for data in pictures:
        tokens += model.projector.tokens_for(hashlib.sha256(data).hexdigest(), lambda data=data: data)
    return tokens + model.tokenize("What is this?<|im_end|>\n<|im_start|>assistant\n", add_bos=False, special=True)


def test_a_prompt_with_more_new_pictures_than_the_projector_keeps_is_still_evaluated(model, monkeypatch):
    """The first pictures are let go of before the prefill reaches them: they are prepared again for their decode."""
    monkeypatch.setattr(projector_module, "KEPT_PICTURES", 2)
    pictures = [png(seed=20 + i) for i in range(3)]
    prompt = prompt_with(model, pictures)
    outcome = generate(model, GenerationRequest(prompt=prompt, max_tokens=2, sampling=GREEDY))
    assert outcome.stats.prompt_tokens_evaluated == len(prompt)
    held = model.tokens[: len(prompt)]
    assert held == prompt  # each picture's positions are in the sequence, where the prompt puts them
    for data in pictures:
        assert held.count(image_token(hashlib.sha256(data).hexdigest())) == IMAGE_TOKENS


def test_the_same_picture_twice_in_a_row_is_evaluated_twice(model):
    """Two copies of one picture side by side are one run of its id: each copy takes its own positions."""
    data = png(seed=30)
    prompt = prompt_with(model, [data, data])
    outcome = generate(model, GenerationRequest(prompt=prompt, max_tokens=2, sampling=GREEDY))
    assert outcome.stats.prompt_tokens_evaluated == len(prompt)
    assert model.tokens.count(image_token(hashlib.sha256(data).hexdigest())) == 2 * IMAGE_TOKENS
