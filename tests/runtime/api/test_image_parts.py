"""`image_url` content parts through `lokal serve --mmproj`: the starter model with the test projector (random weights).

What the model says about a picture is noise by construction: these tests check that the picture is
in the prompt (its positions in usage), and that each bad image is a 400 naming the part. Reply
quality with a real vision model is not measured here.
"""

from __future__ import annotations

import base64
import http.server
import threading

import pytest

from serve_process import MODEL_NAME, serving
from vision_files import IMAGE_TOKENS, png, write_projector
from runtime.vision.image_bytes import MAX_IMAGE_BYTES

pytestmark = pytest.mark.slow

CHAT = "/v1/chat/completions"
PARAM = "messages[0].content[1].image_url.url"


def data_url(data: bytes, mime: str = "image/png") -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


def asking(url: str | None, text: str = "What is in this picture?") -> dict:
    parts: list[dict] = [{"type": "text", "text": text}]
    if url is not None:
        parts.append({"type": "image_url", "image_url": {"url": url}})
    return {"model": MODEL_NAME, "messages": [{"role": "user", "content": parts}], "max_tokens": 4, "temperature": 0.0}


@pytest.fixture(scope="module")
def projector(tmp_path_factory):
    return write_projector(tmp_path_factory.mktemp("mmproj") / "mmproj-test-siglip.gguf")


@pytest.fixture(scope="module")
def seeing(starter_model, projector):
    with serving(starter_model, "--mmproj", str(projector), "--max-body", str(32 * 1024 * 1024), "--parallel", "1") as server:
        yield server


def test_an_image_part_is_in_the_prompt(seeing):
    text_only = seeing.http("POST", CHAT, asking(None), timeout=180)
    with_image = seeing.http("POST", CHAT, asking(data_url(png(seed=11))), timeout=180)
    assert text_only.status == 200 and with_image.status == 200, with_image.body[:300]
    added = with_image.json()["usage"]["prompt_tokens"] - text_only.json()["usage"]["prompt_tokens"]
    assert added > IMAGE_TOKENS  # the picture's positions and the projector's text around them
    # Through the openai client too, as a client sends it.
    reply = seeing.openai().chat.completions.create(**asking(data_url(png(seed=11))))
    assert reply.usage.prompt_tokens == with_image.json()["usage"]["prompt_tokens"]


@pytest.mark.parametrize(
    "url, code, says",
    [
        ("data:image/png;base64," + "A" * ((MAX_IMAGE_BYTES + 2) // 3 * 4 + 8), "image_too_large", f"over the limit of {MAX_IMAGE_BYTES} bytes"),
        (data_url(b"just some text", "text/plain"), "invalid_image", "'text/plain', not an image type"),
        (data_url(png(), "image/jpeg"), "invalid_image", "declared as 'image/jpeg' but its bytes are image/png"),
        (data_url(png())[:-7], "invalid_image", "the base64 data is truncated or not base64"),
        (data_url(b"%PDF-1.7 not a picture", "image/png"), "invalid_image", "not an image in a supported format"),
        ("ftp://example.com/a.png", None, "must be a data URL"),
        ("https://127.0.0.1:9/a.png", "remote_images_off", "does not fetch remote images"),
    ],
    ids=["too-large", "wrong-mime", "mime-mismatch", "truncated-base64", "not-a-picture", "not-a-url", "remote-off"],
)
def test_a_bad_image_is_a_400_naming_the_part(seeing, url, code, says):
    reply = seeing.http("POST", CHAT, asking(url), timeout=180)
    assert reply.status == 400, (reply.status, reply.body[:300])
    error = reply.json()["error"]
    assert error["param"] == PARAM and error["code"] == code
    assert error["message"].startswith(PARAM) and says in error["message"], error["message"]
    assert seeing.http("POST", CHAT, asking(None), timeout=180).status == 200  # and the server keeps serving


def test_a_broken_image_is_a_400_from_the_decoder(seeing):
    """Its header reads as a PNG, so only the decoder finds it broken: still a 400 that says so."""
    reply = seeing.http("POST", CHAT, asking(data_url(png(seed=12)[:120])), timeout=180)
    assert reply.status == 400, (reply.status, reply.body[:300])
    assert "broken or truncated" in reply.json()["error"]["message"]


def test_an_image_for_a_model_that_cannot_see_is_a_400_saying_so(starter_model):
    with serving(starter_model) as server:  # no --mmproj
        reply = server.http("POST", CHAT, asking(data_url(png())), timeout=180)
    assert reply.status == 400
    error = reply.json()["error"]
    assert error["code"] == "model_not_multimodal" and "cannot see images" in error["message"]
    assert error["param"] == "messages[0].content[1].image_url"


class _Pictures(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path != "/picture.png":
            self.send_error(404)
            return
        body = png(seed=13)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args):
        pass


def test_remote_images_are_fetched_only_behind_the_flag(starter_model, projector):
    pictures = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Pictures)
    threading.Thread(target=pictures.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{pictures.server_address[1]}"
    try:
        with serving(starter_model, "--mmproj", str(projector), "--allow-remote-images") as server:
            fetched = server.http("POST", CHAT, asking(f"{base}/picture.png"), timeout=180)
            inline = server.http("POST", CHAT, asking(data_url(png(seed=13))), timeout=180)
            missing = server.http("POST", CHAT, asking(f"{base}/nothing.png"), timeout=180)
    finally:
        pictures.shutdown()
    assert fetched.status == 200, fetched.body[:300]
    assert fetched.json()["usage"]["prompt_tokens"] == inline.json()["usage"]["prompt_tokens"]
    assert missing.status == 400 and missing.json()["error"]["code"] == "image_fetch_failed" and "HTTP 404" in missing.json()["error"]["message"]
