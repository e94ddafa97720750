"""The embedding model's threads: every core while no reply is on its way, half of them while one is, the same
vectors either way; a thread count the load names is kept. bench/embedding_threads.py measures what it is worth."""

from __future__ import annotations

import io

import numpy as np
import pytest

from runtime.embeddings.model import EmbeddingModel
from runtime.job_slot import Job
from runtime.cores import default_threads
from runtime.protocol import EmbeddingLoadParams, Empty

TEXTS = ["The harbour master keeps the tide table.", "Gulls circle over the boats at dawn, and the nets are mended."]


def test_a_document_is_embedded_on_every_core_while_no_reply_decodes_and_on_half_beside_one(starter_model, every_core):
    assert default_threads() >= 2, "with one core, all of them and half of them are the same count"
    replying = False
    model = EmbeddingModel(str(starter_model), busy=lambda: replying)
    try:
        alone = model.embed(TEXTS).vectors
        assert model.threads == default_threads()
        replying = True
        beside = model.embed(TEXTS).vectors
        assert model.threads == max(1, default_threads() // 2)
        assert np.array_equal(alone, beside), "a chunk's stored vector must not depend on how busy the machine was"
    finally:
        model.close()


def test_a_thread_count_named_at_load_is_kept_however_busy(starter_model):
    model = EmbeddingModel(str(starter_model), n_threads=1, busy=lambda: False)
    try:
        model.embed(TEXTS[:1])
        assert model.threads == 1
    finally:
        model.close()


@pytest.mark.timeout(300)
def test_the_runtime_counts_a_reply_waiting_in_the_job_slot_as_busy(starter_model, every_core):
    from runtime.server import RuntimeServer

    assert default_threads() >= 2, "with one core, all of them and half of them are the same count"
    server = RuntimeServer(io.BytesIO(), io.BytesIO())
    server.attachments.load_embedding(EmbeddingLoadParams(str(starter_model)))
    embedder = server.documents.embedder
    assert embedder is not None
    try:
        embedder.embed(TEXTS[:1])
        assert embedder.threads == default_threads()
        reply = Job("r1", "chat.generate", conversation_id="c1")
        server.slot.join(reply)
        embedder.embed(TEXTS[:1])
        assert embedder.threads == max(1, default_threads() // 2)
        server.slot.leave(reply)
        embedder.embed(TEXTS[:1])
        assert embedder.threads == default_threads()
    finally:
        server.attachments.unload_embedding(Empty())
