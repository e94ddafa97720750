"""Speculation on the GPU path: prompt lookup and a draft model, both verified on lavapipe (tests/vulkan_helpers.py).

A verification pass carries several tokens of one sequence with logits for all of them, then the rejected ones are
cut from the device's KV cache. On lavapipe a later pass killed the runtime (SIGSEGV) every time, until the tests'
environment turned ggml-vulkan's op fusion off (vulkan_helpers.LAVAPIPE_WORKAROUND).
"""

from __future__ import annotations

import pytest

from runtime.protocol import ChatGenerateParams, ChatMessage, ModelLoadParams
from vulkan_helpers import start_vulkan_runtime

pytestmark = pytest.mark.slow

CODE = "def area(w, h):\n    return w * h\n\ndef perimeter(w, h):\n    return 2 * (w + h)\n"
EDIT = [ChatMessage("user", f"Rewrite this code, renaming w to width and h to height:\n{CODE}")]


def test_prompt_lookup_and_a_draft_model_on_the_device_give_the_plain_reply(vulkan_python, starter_model):
    # A fixed draft length: every step drafts 4 tokens (a 5-token verification pass), whatever lavapipe's speed says.
    client = start_vulkan_runtime(vulkan_python, LOKAL_SPECULATIVE_FIXED_K="4")
    try:
        loaded = client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=1024, n_seq=1, n_gpu_layers=-1, draft_path=str(starter_model)))
        assert loaded.offload.layers == loaded.offload.layers_total

        def ask(mode: str):
            return client.chat(ChatGenerateParams(f"spec-{mode}", EDIT, max_tokens=24, temperature=0.0, speculation=mode), timeout=600)

        plain = ask("off")
        assert plain.stats.completion_tokens > 0 and plain.stats.draft_tokens == 0
        for mode in ("lookup", "draft"):
            result = ask(mode)
            s = result.stats
            assert result.text == plain.text, mode
            assert s.speculation == mode and s.draft_tokens > 0 and s.target_passes < s.completion_tokens, mode
    finally:
        client.close()
