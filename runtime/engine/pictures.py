"""The engine's side of pictures: the projector loaded with a model, and prompts with pictures in them.

The work is in runtime/vision; this module ties it to what only the engine knows: where a picture's
bytes are (the API's recent pictures in memory, else the attachment store the window's
`attachment.add` wrote), and which protocol error each failure is (a picture sent to a model that
cannot see, an id nothing is stored under, bytes that are no picture: INVALID_PARAMS, which the API
answers with a 400 that says so).
"""

from __future__ import annotations

import os
from typing import Callable, Sequence

from runtime import paths
from runtime.documents.store import AttachmentStore
from runtime.llama.llama_model import LlamaModel
from runtime.protocol import ChatMessage, ErrorCode, RpcError
from runtime.vision import positions, prompt
from runtime.vision.image_bytes import ImageError
from runtime.vision.projector import Projector, ProjectorError
from runtime.vision.recent import RECENT

ATTACHMENTS_DIR = "attachments"  # under the data dir: where runtime/server.py keeps the attachment store
NO_VISION = (
    "the loaded model cannot see images: it was loaded without a projector (an mmproj file; "
    "ModelLoadParams.mmproj_path), so a message with an image cannot be answered"
)


def load_projector(path: str, llama: LlamaModel) -> Projector:
    """The projector at `path` for `llama`'s model; MODEL_NOT_FOUND or INVALID_MODEL saying why it cannot be."""
    path = os.path.abspath(os.path.expanduser(path))
    if not os.path.isfile(path):
        raise RpcError(ErrorCode.MODEL_NOT_FOUND, f"params.mmproj_path: no file at {path}", {"mmproj_path": path})
    with open(path, "rb") as f:
        if f.read(4) != b"GGUF":
            raise RpcError(ErrorCode.INVALID_MODEL, f"params.mmproj_path: {os.path.basename(path)} is not a GGUF file", {"mmproj_path": path})
    try:
        return Projector(path, llama.model_pointer, llama.settings.n_threads, use_gpu=llama.settings.n_gpu_layers != 0)
    except ProjectorError as exc:
        raise RpcError(ErrorCode.INVALID_MODEL, f"params.mmproj_path: {os.path.basename(path)} cannot be used with this model: {exc}", {"mmproj_path": path}) from None


def with_markers(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The messages as the template renders them: each picture a marker in its message's text (vision/prompt.py)."""
    if not prompt.has_pictures(messages) and not any(prompt.DELIMITER in m.content for m in messages):
        return list(messages)
    try:
        return prompt.with_markers(messages)
    except ImageError as exc:
        raise RpcError(ErrorCode.INVALID_PARAMS, f"params.messages: attachments: {exc}") from None


def tokenize(llama: LlamaModel, text: str, tokenize_text: Callable[[str, bool], list[int]]) -> list[int]:
    """Token ids of a rendered prompt, its pictures' ids spliced in; INVALID_PARAMS for a picture that cannot be used."""
    try:
        return prompt.tokenize(text, tokenize_text, llama.projector, image_bytes)
    except prompt.NoVision:
        raise RpcError(ErrorCode.INVALID_PARAMS, NO_VISION, {"vision": False}) from None
    except ImageError as exc:
        raise RpcError(ErrorCode.INVALID_PARAMS, f"params.messages: image: {exc}") from None


def image_bytes(image_id: str) -> bytes:
    """The stored picture `image_id`: sent to the API lately, or attached in the window (attachment.add)."""
    data = RECENT.get(image_id)
    if data is not None:
        return data
    try:
        return AttachmentStore(paths.data_dir() / ATTACHMENTS_DIR).get(image_id)
    except KeyError:
        raise ImageError(f"no image is stored with id {image_id} (send it with attachment.add first)") from None


def positions_in(tokens: Sequence[int]) -> int:
    return sum(1 for t in tokens if positions.is_image(t))
