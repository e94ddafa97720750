"""The protocol's version: a client sends it in `initialize`; the runtime refuses a different major version
with VERSION_MISMATCH."""

from __future__ import annotations

PROTOCOL_VERSION = "1.8"  # 1.1: api.start, api.stop, job.waiting; LocalModel.group. 1.2: llama.cpp's samplers, grammar/json_schema, tools; chat template errors. 1.3: chat.generate in the batch lane (several in flight, one per conversation); n_seq; MetricsResult.api_requests. 1.4: runtime.metrics takes MetricsParams.conversation_id (the panel follows the conversation on screen); ModelLoadParams.n_gpu_layers None (Auto, the default); ModelLoadResult.offload, MetricsResult.offload, InitializeResult.gpu_backends, Device.backend and id. 1.5: ModelLoadParams.split_mode and main_gpu; GenerationStats per drafter (lookup_*, model_*); HubQuantsParams.draft (the fit counts the draft partner too). 1.6: reasoning apart from the answer (ChatDelta.reasoning, ChatGenerateResult.reasoning, ChatMessage.reasoning, GenerationStats.reasoning_tokens/answer_tokens/thinking_ms/ttfat_ms/context_full, ChatGenerateParams.reasoning_format/reasoning_effort/enable_thinking/reasoning_budget/continue_reply, max_tokens None); attachment.add, ChatMessage.attachments, ChatGenerateResult.citations, embedding.load and embedding.unload; ModelLoadParams.mmproj_path, ModelLoadResult.vision, GenerationStats.prompt_image_positions; ChatGenerateParams.cache_key (a branch's own saved KV state); ApiStartParams.defaults (a preset) and allow_remote_images; CatalogEntry.kind, mmproj and thinking, HubCatalogResult.version, QuantLevel.mmproj and mmproj_size, DownloadStartParams.with_mmproj, LocalModel.mmproj. 1.7: ModelLoadResult.flash_attn (what the load used); ModelLoadParams.flash_attn false with a quantized V cache is INVALID_PARAMS. 1.8: AttachmentAddParams.id (a stored attachment again, for the model loaded now)


def major(version: str) -> str:
    return version.split(".", 1)[0]
