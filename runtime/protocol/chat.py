"""A reply: chat.generate (messages, samplers, tools), its streamed deltas, its figures, and chat.cancel."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Optional, Union

from runtime.protocol.attachments import Attachment, Citation

Role = Literal["system", "user", "assistant", "tool"]
FinishReason = Literal["stop", "length", "cancelled", "tool_calls"]
ToolChoice = Literal["auto", "none", "required"]


SpeculationMode = Literal["off", "auto", "lookup", "draft", "both"]
# Where a reply's reasoning goes (llama-server's --reasoning-format): none: left in the text as the model wrote
# it; auto: split into `reasoning` by the markers the model's template and metadata name (runtime/reasoning);
# deepseek: the same, and a reply read as thinking from its start even where the template did not open a block.
ReasoningFormat = Literal["none", "auto", "deepseek"]
ReasoningEffort = Literal["low", "medium", "high"]


@dataclass
class ToolCall:
    """A call of one function, as the model wrote it: `arguments` is the JSON text of its arguments."""

    id: str
    name: str
    arguments: str


@dataclass
class ChatMessage:
    role: Role
    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)  # an assistant turn that called tools
    tool_call_id: Optional[str] = None  # role "tool": the call this message answers
    name: Optional[str] = None  # role "tool": the function that answered
    # An assistant turn's reasoning: passed to templates that render it, else dropped (most templates drop it).
    reasoning: str = ""
    # Files stored with attachment.add (runtime/protocol/attachments.py): a user turn's documents go into
    # its prompt whole, or their best chunks when too large.
    attachments: list[Attachment] = field(default_factory=list)


@dataclass
class ToolSpec:
    """A function the model may call (OpenAI's `tools[].function`)."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=dict)  # a JSON schema of its arguments


@dataclass
class LogitBias:
    token: int
    bias: float  # added to the token's logit; -100 or less bans it


@dataclass
class ChatGenerateParams:
    conversation_id: str
    messages: list[ChatMessage]
    max_tokens: Optional[int] = None  # None: until the model stops, within the context
    temperature: float = 0.7
    top_p: float = 0.95
    top_k: int = 40
    seed: Optional[int] = None
    stop: list[str] = field(default_factory=list)
    # Raw text to continue instead of `messages` rendered by the chat template (the API's /v1/completions).
    prompt: Optional[str] = None
    # With `prompt`: its token ids, used exactly as given (no BOS added, nothing parsed), as evaluation tools send
    # them; `prompt` is then their text, which names the conversation.
    prompt_tokens: Optional[list[int]] = None
    # Speculative decoding (runtime/speculative): auto = prompt lookup, plus the draft model if one is loaded.
    speculation: SpeculationMode = "auto"
    # llama.cpp's samplers (runtime/llama/sampling.py), with llama-server's defaults: 1.0 / 0 turn one off.
    min_p: float = 0.05
    typical_p: float = 1.0
    repeat_penalty: float = 1.0
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    penalty_last_n: int = 64  # recent tokens (prompt included) the penalties look at; -1: the whole context
    dry_multiplier: float = 0.0  # DRY (don't repeat yourself) penalty; 0: off
    dry_base: float = 1.75
    dry_allowed_length: int = 2
    dry_penalty_last_n: int = -1  # -1: the whole context
    logit_bias: list[LogitBias] = field(default_factory=list)
    # Constrained output, at most one of: a GBNF grammar (root rule "root"), or a JSON schema the reply
    # must validate against ({} or {"type": "object"}: any JSON object).
    grammar: Optional[str] = None
    json_schema: Optional[dict[str, Any]] = None
    # Functions the model may call: rendered by the model's chat template, calls parsed into the result.
    tools: list[ToolSpec] = field(default_factory=list)
    # The saved KV state this turn extends (runtime/kvstore); "": the conversation's. The window names the
    # branch on screen, so each branch keeps its own state and a switch back to one restores it (#32).
    cache_key: str = ""
    tool_choice: ToolChoice = "auto"  # required: the reply is a call (grammar-constrained); none: no call
    tool_name: Optional[str] = None  # the one function the reply must call (a grammar makes sure)
    # Reasoning (runtime/reasoning): how it is split from the answer, and what the template is told.
    reasoning_format: ReasoningFormat = "auto"
    reasoning_effort: Optional[ReasoningEffort] = None  # passed to templates that take it (gpt-oss); None: theirs
    enable_thinking: Optional[bool] = None  # passed to templates that take it (Qwen3's chat_template_kwargs); None: theirs
    # Thinking tokens allowed before the block is closed and the answer begins (llama-server's --reasoning-budget):
    # None or -1: unlimited; 0: no thinking.
    reasoning_budget: Optional[int] = None
    # The last message is an assistant message to extend in place (no new assistant header), from the live cache;
    # the result's text and reasoning (and the deltas) are what was added to it.
    continue_reply: bool = False
    # Each reply token's log-probability, with this many most likely alternatives (0 to MAX_TOP_LOGPROBS);
    # None: none (computing them costs a pass over the vocabulary per token).
    logprobs: Optional[int] = None
    # With `prompt`: each prompt token's log-probability given the tokens before it too (with `logprobs`
    # alternatives), as OpenAI's `echo` reports them. The prompt is then read again whole, whatever the
    # cache holds, in chunks that keep every row of logits.
    prompt_logprobs: bool = False
    # False: nobody continues this reply, so its cache is dropped when it ends, not saved (an API request's choices
    # after the first, whose prompt the first one keeps).
    keeps_state: bool = True


MAX_TOP_LOGPROBS = 20  # OpenAI's limit for top_logprobs


@dataclass
class TokenChoice:
    """A token the model could write at a position, with its log-probability there.

    Under the model's own distribution (a softmax of its logits), before any sampler setting
    (temperature, top-k, penalties, grammar) reshapes it, as OpenAI and llama-server report it.
    """

    token_id: int
    text: str  # its bytes as UTF-8, a character split across tokens replaced by U+FFFD
    bytes: list[int]
    logprob: float


@dataclass
class TokenLogprob(TokenChoice):
    """A token of the answer, and the most likely tokens at its position (ChatGenerateParams.logprobs of them)."""

    top: list[TokenChoice] = field(default_factory=list)


@dataclass
class GenerationStats:
    prompt_tokens: int = 0
    prompt_tokens_reused: int = 0
    prompt_tokens_evaluated: int = 0
    completion_tokens: int = 0
    ttft_ms: float = 0.0
    prefill_tokens_per_s: float = 0.0
    decode_tokens_per_s: float = 0.0
    total_ms: float = 0.0
    rss_bytes: int = 0
    # Prompt tokens taken from a saved KV state (kv store) instead of being evaluated; disjoint from
    # prompt_tokens_reused (the live cache): reused + restored + evaluated == prompt_tokens.
    prompt_tokens_restored: int = 0
    kv_restore_ms: float = 0.0  # time to find, read, check and load that state (part of ttft_ms)
    kv_restore_source: str = ""  # "ram", "disk", or "" when nothing was restored
    # The prefill time the restore spared, from this model's measured prefill speed, less kv_restore_ms (0: unknown).
    kv_restore_saved_ms: float = 0.0
    # Oldest messages left out because the conversation no longer fits the context (system prompt kept).
    context_dropped_messages: int = 0
    # Of prompt_tokens, the positions pictures take (runtime/vision): embeddings from the projector, not token ids.
    prompt_image_positions: int = 0
    # Why this reply was prompted with ChatML instead of the model's own chat template ("": it was not).
    chat_template_fallback: str = ""
    # Speculative decoding (runtime/speculative), this turn so far.
    speculation: str = "off"  # the setting it ran with
    speculation_notice: str = ""  # why speculation was switched off, if it was (English: a window says it from the next field)
    # The architecture of a model whose cache cannot be rewound to the last accepted token, where that switched it off (1.12).
    speculation_cannot_rewind: str = ""
    draft_tokens: int = 0  # tokens drafted (prompt lookup and draft model)
    draft_tokens_accepted: int = 0
    acceptance_rate: float = 0.0  # accepted / drafted
    mean_accepted_length: float = 0.0  # accepted tokens per draft
    target_passes: int = 0  # target forward passes while decoding
    tokens_per_target_pass: float = 0.0
    speedup: float = 0.0  # decode rate / the plain decode rate measured on this machine (0: not measured yet)
    # The same drafted / accepted tokens per drafter: prompt lookup's, and the draft model's (their sums are the above).
    lookup_draft_tokens: int = 0
    lookup_draft_tokens_accepted: int = 0
    model_draft_tokens: int = 0
    model_draft_tokens_accepted: int = 0
    # Reasoning (runtime/reasoning): completion_tokens == reasoning_tokens + answer_tokens (markers count as reasoning).
    reasoning_tokens: int = 0
    answer_tokens: int = 0
    thinking_ms: float = 0.0  # from the first reasoning token to the end of the block
    ttfat_ms: float = 0.0  # time to the first answer token, from the request (0: no answer yet)
    # The reply ended ("length") because the context had no room for another token, not because of max_tokens.
    context_full: bool = False


@dataclass
class ChatGenerateResult:
    request_id: Union[int, str]
    conversation_id: str
    text: str  # the answer; with tools: the reply's text outside its tool calls
    finish_reason: FinishReason
    stats: GenerationStats
    tool_calls: list[ToolCall] = field(default_factory=list)
    reasoning: str = ""  # the reply's reasoning, apart from the answer (reasoning_format "none": always "")
    # The attachments' chunks this reply was given (retrieval): what to cite under it.
    citations: list[Citation] = field(default_factory=list)
    # The answer's tokens with their log-probabilities (ChatGenerateParams.logprobs; the reasoning's are left out).
    logprobs: list[TokenLogprob] = field(default_factory=list)
    # ChatGenerateParams.prompt_logprobs: the prompt's tokens after its first (which has nothing before it), each
    # with its log-probability given those before it.
    prompt_logprobs: list[TokenLogprob] = field(default_factory=list)


@dataclass
class ChatDelta:
    """Notification `chat.delta`: text that streamed since the previous delta, the answer and the reasoning apart."""

    request_id: Union[int, str]
    conversation_id: str
    text: str  # the answer only
    reasoning: str = ""
    # The answer's tokens since the previous delta (ChatGenerateParams.logprobs): sent just before their text, which a
    # stop string may hold back a while.
    logprobs: list[TokenLogprob] = field(default_factory=list)


@dataclass
class ChatCancelParams:
    request_id: Union[int, str]


@dataclass
class ChatCancelResult:
    cancelled: bool
