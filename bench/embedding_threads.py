"""How long the real runtime takes to make a document searchable while no reply decodes: attachment.add of a document
larger than half the context, with the chat model loaded and idle and the embedding model loaded as the window
loads it (no thread count named). Runs in any tree (bench/paired.py across trees).

The embedding model is the starter model (SmolLM2-135M, mean-pooled) unless --model names another: no embedding
GGUF can be fetched here, and 135M is the size of the catalog's Nomic Embed (137M).

    .venv/bin/python bench/embedding_threads.py [--chunks 16] [--model PATH] [--json FILE]
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from report import publish  # noqa: E402
from runtime.client import RuntimeClient  # noqa: E402
from runtime.models import wheels  # noqa: E402
from runtime.protocol import AttachmentAddParams, EmbeddingLoadParams, ModelLoadParams, methods  # noqa: E402

N_CTX = 512  # the chat model's: a document over 256 tokens is embedded, not sent whole
SENTENCES = ("The harbour master keeps the tide table for day {i}.", "Gulls circle over the boats that came in on day {i}.",
             "On day {i} the nets were mended before dawn and the catch was weighed at noon.", "Rain fell on day {i}, and the ferry ran late.")


def document(chunks: int) -> str:
    """About `chunks` chunks of runtime/documents/chunking.py's 1,000 characters, each sentence different."""
    lines, size, i = [], 0, 0
    while size < chunks * 1000:
        line = SENTENCES[i % len(SENTENCES)].format(i=i)
        lines.append(line)
        size += len(line) + 1
        i += 1
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=16)
    parser.add_argument("--model", default=str(wheels.path_of(wheels.STARTER)), help="the embedding model (default: the starter model)")
    parser.add_argument("--json", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    data_dir = tempfile.mkdtemp(prefix="lokal-bench-embed-")  # nothing embedded before
    client = RuntimeClient(env=dict(os.environ, LOKAL_DATA_DIR=data_dir))
    try:
        client.initialize("bench-embedding-threads")
        client.load_model(ModelLoadParams(path=str(wheels.path_of(wheels.STARTER)), n_ctx=N_CTX))
        client.request(methods.EMBEDDING_LOAD, EmbeddingLoadParams(args.model), timeout=300)
        text = document(args.chunks)
        started = time.perf_counter()
        info = client.request(methods.ATTACHMENT_ADD, AttachmentAddParams(name="tides.md", data_base64=base64.b64encode(text.encode()).decode()), timeout=3600)
        seconds = time.perf_counter() - started
    finally:
        client.close()
    assert info.searchable, info.note
    publish({
        "cores": os.cpu_count(),
        "document_chars": len(text),
        "document_tokens": info.tokens,
        "searchable_s": round(seconds, 2),
        "ms_per_1000_chars": round(seconds * 1000 / (len(text) / 1000), 1),
    }, args.json)


if __name__ == "__main__":
    main()
