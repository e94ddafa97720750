"""`lokal serve` of a downloaded vision model loads the projector downloaded with it, as the window does, without
--mmproj; --no-mmproj serves it text only. The starter model and the test projector (tests/vision_files.py: random
weights) stand in for the vision model, paired in one Hugging Face snapshot as a vision model's level is downloaded."""

from __future__ import annotations

import base64
import os
import subprocess
import sys

import pytest

from serve_process import MODEL_NAME, Served
from vision_files import png, vision_snapshot

pytestmark = pytest.mark.slow

CHAT = "/v1/chat/completions"


@pytest.fixture(scope="module")
def downloaded(tmp_path_factory, starter_model):
    """The vision model's path in its snapshot, its projector, and the environment that names that cache."""
    hf_cache = tmp_path_factory.mktemp("serve-vision") / "hf-cache"
    model, projector = vision_snapshot(hf_cache, starter_model)
    return model, projector, dict(os.environ, HF_HUB_CACHE=str(hf_cache))


def picture_question() -> dict:
    url = "data:image/png;base64," + base64.b64encode(png(seed=3)).decode()
    parts = [{"type": "text", "text": "What is in this picture?"}, {"type": "image_url", "image_url": {"url": url}}]
    return {"model": MODEL_NAME, "messages": [{"role": "user", "content": parts}], "max_tokens": 2, "temperature": 0.0}


def serve(model, env, *args: str) -> tuple[dict, Served]:
    server = Served("--n-threads", "1", "--parallel", "1", *args, model=str(model), env=env)
    return server.wait_event("state", 120, state="ready"), server


def test_a_downloaded_vision_model_is_served_with_its_projector_by_default(downloaded):
    model, projector, env = downloaded
    ready, server = serve(model, env)
    try:
        assert ready["loaded"]["vision"] is True
        reply = server.http("POST", CHAT, picture_question(), timeout=180)
        assert reply.status == 200, reply.body[:300]
        assert any(str(projector) in line for line in server.stderr), server.stderr  # it says which projector it took
    finally:
        assert server.close() == 0


def test_no_mmproj_serves_the_vision_model_text_only(downloaded):
    model, _projector, env = downloaded
    ready, server = serve(model, env, "--no-mmproj")
    try:
        assert ready["loaded"]["vision"] is False
        reply = server.http("POST", CHAT, picture_question(), timeout=180)
        assert reply.status == 400 and reply.json()["error"]["code"] == "model_not_multimodal", reply.body[:300]
    finally:
        assert server.close() == 0


def test_mmproj_and_no_mmproj_together_are_a_usage_error(downloaded):
    model, projector, env = downloaded
    done = subprocess.run([sys.executable, "-m", "app", "serve", "--model", str(model), "--mmproj", str(projector), "--no-mmproj"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--no-mmproj: not allowed with argument --mmproj" in done.stderr, done.stderr
