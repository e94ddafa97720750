"""runtime.metrics: the runtime's memory, context and the live figures of a streaming reply."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from runtime.protocol.chat import GenerationStats
from runtime.protocol.model import OffloadReport
from runtime.protocol.session import Device


@dataclass
class MetricsParams:
    # The conversation whose figures are wanted (the one on the window's screen); None: this client's newest reply.
    conversation_id: Optional[str] = None


@dataclass
class MetricsResult:
    rss_bytes: int
    model_id: Optional[str]
    n_ctx: int  # per conversation
    kv_tokens_used: int  # the context of the asked conversation's reply, else this client's newest (streaming, else the last one)
    kv_bytes_used: int  # the KV cache of every sequence held now
    devices: list[Device]
    # Live figures of the asked conversation's reply (else this client's newest) streaming now; None while none
    # streams, also while only the API's (or only another conversation's) do.
    generation: Optional[GenerationStats] = None
    kv_tokens_total: int = 0  # tokens held by every sequence (conversations streaming and resting)
    n_seq: int = 0  # sequences the context holds
    # Requests the API is answering or has waiting now (0 when it does not serve): a window that is
    # asked to close says so, because stopping the API would cut those replies off.
    api_requests: int = 0
    offload: Optional[OffloadReport] = None  # the loaded model's (ModelLoadResult.offload): the panel's "28/28 layers on ..."
