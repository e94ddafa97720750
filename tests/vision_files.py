"""Test pictures, and a tiny SigLIP projector GGUF with random weights, for the vision tests.

No vision model can be downloaded where the tests run, so the tests build one: a one-block SigLIP
encoder (the encoder SmolVLM pairs with SmolLM2) and a Gemma 3 style projector (average pooling,
RMS norm, a linear map) whose output is the starter model's embedding width (SmolLM2-135M: 576), so
llama.cpp's multimodal library accepts it beside the starter model. Gemma 3's projector rather than
SmolVLM's own (idefics3) because idefics3 marks images with tokens SmolLM2's vocabulary lacks; the
encoder is the same SigLIP graph either way. Replies from it are noise by construction: the tests
check positions, caching and batching, never what the model says about a picture.

The tensor names and keys are the ones llama.cpp's tools/mtmd/clip.cpp reads (clip-impl.h's KEY_*/TN_*).
"""

from __future__ import annotations

import base64
import os
import random
import struct
import zlib
from contextlib import contextmanager
from pathlib import Path

import numpy as np

IMAGE_SIZE = 64  # pixels a side: every picture is resized to this
PATCH_SIZE = 8
POOL = 2  # the projector averages POOL x POOL patches into one image token
VISION_WIDTH = 32
TEXT_WIDTH = 576  # SmolLM2-135M's n_embd
IMAGE_TOKENS = (IMAGE_SIZE // PATCH_SIZE // POOL) ** 2  # positions one picture takes in the sequence


def write_projector(path: Path, *, text_width: int = TEXT_WIDTH, seed: int = 0) -> Path:
    """Write the projector to `path` (about 200 KB) and return it."""
    import gguf  # the test extra: only the tests write GGUF files

    rng = np.random.default_rng(seed)

    def weights(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    writer = gguf.GGUFWriter(str(path), "clip")
    writer.add_string("general.name", "lokal-test-siglip")
    writer.add_bool("clip.has_vision_encoder", True)
    writer.add_string("clip.projector_type", "gemma3")
    writer.add_bool("clip.use_gelu", True)
    writer.add_uint32("clip.vision.image_size", IMAGE_SIZE)
    writer.add_uint32("clip.vision.patch_size", PATCH_SIZE)
    writer.add_uint32("clip.vision.embedding_length", VISION_WIDTH)
    writer.add_uint32("clip.vision.feed_forward_length", 2 * VISION_WIDTH)
    writer.add_uint32("clip.vision.block_count", 1)
    writer.add_uint32("clip.vision.attention.head_count", 2)
    writer.add_float32("clip.vision.attention.layer_norm_epsilon", 1e-6)
    writer.add_uint32("clip.vision.projection_dim", text_width)
    writer.add_uint32("clip.vision.projector.scale_factor", POOL)
    writer.add_array("clip.vision.image_mean", [0.5, 0.5, 0.5])
    writer.add_array("clip.vision.image_std", [0.5, 0.5, 0.5])

    n_patches = (IMAGE_SIZE // PATCH_SIZE) ** 2
    # numpy shapes are ggml's ne reversed: a linear layer is (out, in).
    tensors = {
        "v.patch_embd.weight": weights(VISION_WIDTH, 3, PATCH_SIZE, PATCH_SIZE),
        "v.patch_embd.bias": weights(VISION_WIDTH),
        "v.position_embd.weight": weights(n_patches, VISION_WIDTH),
        "v.post_ln.weight": np.ones(VISION_WIDTH, np.float32),
        "v.post_ln.bias": np.zeros(VISION_WIDTH, np.float32),
        "mm.soft_emb_norm.weight": np.ones(VISION_WIDTH, np.float32),
        "mm.input_projection.weight": weights(VISION_WIDTH, text_width),
    }
    block = "v.blk.0"
    for name in ("attn_q", "attn_k", "attn_v", "attn_out"):
        tensors[f"{block}.{name}.weight"] = weights(VISION_WIDTH, VISION_WIDTH)
        tensors[f"{block}.{name}.bias"] = weights(VISION_WIDTH)
    for name in ("ln1", "ln2"):
        tensors[f"{block}.{name}.weight"] = np.ones(VISION_WIDTH, np.float32)
        tensors[f"{block}.{name}.bias"] = np.zeros(VISION_WIDTH, np.float32)
    tensors[f"{block}.ffn_up.weight"] = weights(2 * VISION_WIDTH, VISION_WIDTH)
    tensors[f"{block}.ffn_up.bias"] = weights(2 * VISION_WIDTH)
    tensors[f"{block}.ffn_down.weight"] = weights(VISION_WIDTH, 2 * VISION_WIDTH)
    tensors[f"{block}.ffn_down.bias"] = weights(VISION_WIDTH)
    for name, data in tensors.items():
        writer.add_tensor(name, data)

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def vision_snapshot(hf_cache: Path, model: Path, repo: str = "lokal-test/SmolVLM-test", revision: str = "0" * 40) -> tuple[Path, Path]:
    """`model` as a downloaded vision model: its file (a link, as the cache's are) and the test projector in one
    snapshot of the Hugging Face cache at `hf_cache`, where the runtime's model list pairs them
    (runtime/models/local.py). Returns the model's path in the snapshot and the projector's; the repository's
    folder (remove it to undo the download) is the model path's parents[2]."""
    snapshot = hf_cache / ("models--" + repo.replace("/", "--")) / "snapshots" / revision
    snapshot.mkdir(parents=True)
    os.symlink(model, snapshot / model.name)
    return snapshot / model.name, write_projector(snapshot / "mmproj-test-siglip-f16.gguf")


def png(width: int = 40, height: int = 30, seed: int = 0) -> bytes:
    """A PNG of random RGB pixels (each seed a different picture), written by hand: the runtime has no imaging library."""
    rng = random.Random(seed)
    rows = b"".join(b"\x00" + bytes(rng.randrange(256) for _ in range(width * 3)) for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


@contextmanager
def seeing_runtime(model, projector, env=None, **load):
    """A runtime process with the starter model and the test projector loaded (`client.loaded`: the load's result)."""
    from runtime.client import RuntimeClient
    from runtime.protocol import ModelLoadParams

    client = RuntimeClient(env=dict(os.environ, **(env or {})))
    try:
        client.initialize("pytest")
        info = client.load_model(ModelLoadParams(path=str(model), n_ctx=load.pop("n_ctx", 1024), n_seq=load.pop("n_seq", 2), mmproj_path=str(projector), **load))
        client.loaded = info
        yield client
    finally:
        client.close()


def add_picture(client, data: bytes, name: str = "picture.png", mime: str = ""):
    """The picture stored in the runtime (attachment.add, as the window sends it), as a message carries it."""
    from runtime.protocol import Attachment, AttachmentAddParams, methods

    info = client.request(methods.ATTACHMENT_ADD, AttachmentAddParams(name=name, mime=mime, data_base64=base64.b64encode(data).decode()), timeout=30)
    return Attachment("image", info.id, name, info.mime)
