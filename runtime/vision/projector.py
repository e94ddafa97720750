"""The projector (mmproj GGUF) beside a loaded model: pictures to positions, and positions evaluated into a sequence.

Two steps, on two threads. `tokens_for` runs where the prompt is rendered (the request's thread): it
decodes the picture, lets mtmd_tokenize cut it into chunks (the text the projector wraps a picture in,
such as Gemma 3's `<start_of_image>`, and the image chunk) and returns them as token ids, the image
chunk as its placeholder run (positions.py); the chunks are kept, by picture, for the second step.
`decode` runs on the engine thread when the reply's prefill reaches a placeholder run: the vision
encoder and the embeddings' decode (mtmd_helper_eval_chunk_single) go into the reply's own sequence
at its own position, as a text chunk would. Pictures already tokenized are kept (a few, newest last),
so a conversation rendered again to fit its context, or its next turn, does not decode them again.
"""

from __future__ import annotations

import ctypes
import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable

import llama_cpp

from runtime.vision.image_bytes import ImageError, inspect
from runtime.vision.positions import image_token

log = logging.getLogger("lokal.vision")

KEPT_PICTURES = 16  # tokenized pictures kept for the next render (each holds its preprocessed pixels)
KEPT_SOURCES = 4096  # where pictures came from (an id and a function each), to prepare one again
TEXT_CHUNK, IMAGE_CHUNK = 0, 1


class ProjectorError(RuntimeError):
    """The projector cannot be loaded or a picture cannot be read; the message says why."""


def _mtmd() -> Any:
    """llama-cpp-python's bindings of the multimodal library, or ProjectorError when this build has none."""
    try:
        import llama_cpp.mtmd_cpp as mtmd
    except (OSError, RuntimeError, FileNotFoundError) as exc:
        raise ProjectorError(
            "this build of llama-cpp-python has no multimodal library (libmtmd): it was built with LLAVA_BUILD=OFF; "
            f"build it again with scripts/dev.sh ({exc})"
        ) from None
    return mtmd


class _Log:
    """mtmd's log: errors kept (the reason a projector does not load is only said there), the rest at debug level."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.callback = llama_cpp.llama_log_callback(self._write)

    def _write(self, level: int, text: bytes, _data: Any) -> None:
        line = text.decode("utf-8", "replace").rstrip()
        if level == 4:  # GGML_LOG_LEVEL_ERROR
            self.errors = [*self.errors[-20:], line]
        log.debug("mtmd: %s", line)


_LOG = _Log()
_log_installed = False


@dataclass
class _Picture:
    chunks: Any  # mtmd_input_chunks*, freed with the picture
    tokens: list[int]  # the text ids and the placeholder run, in order
    image_chunk: Any  # the image chunk inside `chunks`
    n_pos: int


class Projector:
    def __init__(self, path: str, model: Any, n_threads: int, use_gpu: bool):
        """`model`: llama.cpp's llama_model* of the text model the projector feeds."""
        global _log_installed
        mtmd = _mtmd()
        if not _log_installed:
            mtmd.mtmd_helper_log_set(_LOG.callback, None)
            _log_installed = True
        self._mtmd = mtmd
        self.path = path
        params = mtmd.mtmd_context_params_default()
        params.use_gpu = use_gpu
        params.n_threads = n_threads
        params.print_timings = False
        params.warmup = False
        _LOG.errors = []
        self._ctx = mtmd.mtmd_init_from_file(path.encode(), model, params)
        if not self._ctx:
            reason = " ".join(e for e in _LOG.errors if e) or "mtmd_init_from_file failed"
            raise ProjectorError(reason)
        if not mtmd.mtmd_support_vision(self._ctx):
            mtmd.mtmd_free(self._ctx)
            self._ctx = None
            raise ProjectorError("it has no vision encoder (an audio-only projector)")
        # Only PNG, JPEG, GIF and BMP reach the helper (image_bytes.py); this keeps it from starting ffmpeg anyway.
        self._opt = mtmd.mtmd_helper_init_opt_default()
        self._opt.video_params.ffmpeg_bin_dir = b"/nonexistent-lokal"
        self._pictures: OrderedDict[str, _Picture] = OrderedDict()
        self._by_token: dict[int, _Picture] = {}
        # Where each picture seen came from, by placeholder id: one let go of (KEPT_PICTURES) before its prefill
        # reached it, in a prompt with more new pictures than that, is prepared again for its decode.
        self._sources: OrderedDict[int, tuple[str, Callable[[], bytes], str]] = OrderedDict()
        self._lock = threading.Lock()  # prompts render on several threads at once
        self.uses_mrope = bool(mtmd.mtmd_decode_use_mrope(self._ctx))

    def tokens_for(self, image_id: str, data: Callable[[], bytes], mime: str = "") -> list[int]:
        """The ids the picture `image_id` (sha256 hex of its bytes) takes in a prompt; `data` gives its bytes when
        it is not kept already. ImageError (image_bytes.py) for bytes that are no usable picture."""
        with self._lock:
            self._sources[image_token(image_id)] = (image_id, data, mime)
            self._sources.move_to_end(image_token(image_id))
            while len(self._sources) > KEPT_SOURCES:
                self._sources.popitem(last=False)
            kept = self._pictures.get(image_id)
            if kept is not None:
                self._pictures.move_to_end(image_id)
                return list(kept.tokens)
        picture = self._tokenize(image_id, data(), mime)
        with self._lock:
            if image_id in self._pictures:  # another thread prepared it meanwhile
                self._mtmd.mtmd_input_chunks_free(picture.chunks)
                return list(self._pictures[image_id].tokens)
            self._pictures[image_id] = picture
            self._by_token[image_token(image_id)] = picture
            while len(self._pictures) > KEPT_PICTURES:
                old_id, old = self._pictures.popitem(last=False)
                self._by_token.pop(image_token(old_id), None)
                self._mtmd.mtmd_input_chunks_free(old.chunks)
        return list(picture.tokens)

    def _tokenize(self, image_id: str, data: bytes, mime: str) -> _Picture:
        mtmd = self._mtmd
        info = inspect(data, mime)
        buf = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
        bitmap = mtmd.mtmd_helper_bitmap_init_from_buf(self._ctx, buf, len(data), False, self._opt)
        if not bitmap:
            raise ImageError(f"the {info.mime} image is broken or truncated: it cannot be decoded")
        chunks = mtmd.mtmd_input_chunks_init()
        try:
            mtmd.mtmd_bitmap_set_id(bitmap, image_id.encode())
            marker = mtmd.mtmd_default_marker()
            text = mtmd.mtmd_input_text(marker, len(marker), False, True)
            bitmaps = (mtmd.mtmd_bitmap_p_ctypes * 1)(bitmap)
            rc = mtmd.mtmd_tokenize(self._ctx, chunks, ctypes.byref(text), bitmaps, 1)
            if rc != 0:
                raise ImageError(f"the {info.mime} image ({info.width}x{info.height}) could not be prepared for the projector (mtmd_tokenize: {rc})")
            tokens: list[int] = []
            image_chunk, n_pos = None, 0
            for i in range(mtmd.mtmd_input_chunks_size(chunks)):
                chunk = mtmd.mtmd_input_chunks_get(chunks, i)
                kind = mtmd.mtmd_input_chunk_get_type(chunk)
                if kind == TEXT_CHUNK:
                    n = ctypes.c_size_t()
                    ids = mtmd.mtmd_input_chunk_get_tokens_text(chunk, ctypes.byref(n))
                    tokens.extend(int(ids[j]) for j in range(n.value))
                elif kind == IMAGE_CHUNK and image_chunk is None:
                    image_chunk, n_pos = chunk, int(mtmd.mtmd_input_chunk_get_n_pos(chunk))
                    tokens.extend([image_token(image_id)] * n_pos)
                else:
                    # Projectors that cut a large picture into slices (several image chunks) are not handled yet.
                    raise ImageError("this projector cuts pictures into several parts, which Lokal cannot evaluate yet")
            if image_chunk is None or n_pos <= 0:
                raise ImageError("the projector made no positions of the image")
        except BaseException:
            mtmd.mtmd_input_chunks_free(chunks)
            raise
        finally:
            mtmd.mtmd_bitmap_free(bitmap)
        return _Picture(chunks, tokens, image_chunk, n_pos)

    def n_pos(self, token: int) -> int:
        """Positions one copy of the picture with placeholder `token` takes (0: not tokenized here)."""
        with self._lock:
            picture = self._by_token.get(token)
        return picture.n_pos if picture is not None else 0

    def decode(self, llama_ctx: Any, seq_id: int, n_past: int, token: int, n_batch: int) -> int:
        """Evaluate one copy of the picture `token` into sequence `seq_id` at position `n_past` (engine thread);
        returns the positions it took. ProjectorError when it is not known here or llama.cpp fails."""
        with self._lock:
            source = self._sources.get(token) if token not in self._by_token else None
        if source is not None:
            self.tokens_for(*source)  # let go of since its prompt was rendered: prepared again
        new_n_past = llama_cpp.llama_pos(0)
        with self._lock:  # held throughout: another thread's render must not free the chunk being evaluated
            picture = self._by_token.get(token)
            if picture is None:
                raise ProjectorError("a picture in this prompt is no longer known to the projector")
            rc = self._mtmd.mtmd_helper_eval_chunk_single(self._ctx, llama_ctx, picture.image_chunk, n_past, seq_id, n_batch, True, ctypes.byref(new_n_past))
        if rc != 0:
            raise ProjectorError(f"evaluating the picture failed (mtmd: {rc})")
        return int(new_n_past.value) - n_past

    def close(self) -> None:
        with self._lock:
            for picture in self._pictures.values():
                self._mtmd.mtmd_input_chunks_free(picture.chunks)
            self._pictures.clear()
            self._by_token.clear()
            self._sources.clear()
        if self._ctx:
            self._mtmd.mtmd_free(self._ctx)
            self._ctx = None
