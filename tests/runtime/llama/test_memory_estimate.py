"""The fit check's memory estimate against what the runtime really uses: RSS measured by the runtime
process itself (runtime.metrics) before and after model.load, and after a long prompt."""

from __future__ import annotations

import pytest

from runtime.client import RuntimeClient
from runtime.llama.memory import estimate_load
from runtime.gguf.reader import read_file_header
from runtime.protocol import ChatGenerateParams, ChatMessage, ModelLoadParams

pytestmark = pytest.mark.slow


def test_estimate_is_within_ten_percent_of_the_measured_rss_increase(starter_model):
    n_ctx = 4096
    with RuntimeClient() as client:
        client.initialize("pytest-memory")
        before = client.metrics().rss_bytes
        result = client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=n_ctx))
        loaded = client.metrics().rss_bytes
        # A prompt longer than one micro-batch (about 650 tokens): the peak a conversation reaches.
        client.chat(ChatGenerateParams("memory", [ChatMessage("user", "the quick brown fox jumps over the lazy dog " * 70)], max_tokens=2, temperature=0))
        peak = client.metrics().rss_bytes
    # Every sequence may grow to n_ctx, so the cache holds n_seq x n_ctx cells (runtime/llama/llama_model.py).
    estimate = estimate_load(read_file_header(starter_model), n_ctx * result.n_seq)
    assert estimate.ram_at_load == pytest.approx(loaded - before, rel=0.10)
    assert estimate.ram_peak == pytest.approx(peak - before, rel=0.10)
