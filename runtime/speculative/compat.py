"""Can this draft model draft for that target? Decided from the two GGUF headers, before either is loaded.

Drafted token ids are fed to the target as they are, so both must mean the same
text by the same id: same tokenizer kind, same special tokens, and the same token
strings over the ids they share (a few extra ids at the end, such as padding rows
of the embedding, are harmless and allowed, as llama.cpp allows them).
"""

from __future__ import annotations

from runtime.gguf.reader import GGUFHeader, Strings

MAX_VOCAB_DIFFERENCE = 128
RECURRENT_ARCHITECTURES = {"mamba", "mamba2", "rwkv6", "rwkv6qwen2", "rwkv7", "arwkv7", "jamba", "falcon-h1", "granitehybrid", "lfm2", "plamo2", "nemotron_h"}


class IncompatibleDraft(ValueError):
    """The draft model cannot draft for the target; the message says why."""


def incompatibilities(target: GGUFHeader, draft: GGUFHeader) -> list[str]:
    """Why `draft` cannot draft for `target` (empty: it can). Also the catalog's check, on headers read over HTTP ranges."""
    reasons = []
    if draft.architecture in RECURRENT_ARCHITECTURES:
        reasons.append(f"the draft model is a {draft.architecture} model, which cannot rewind its cache to the last accepted token")
    if target.tokenizer_model != draft.tokenizer_model:
        reasons.append(f"the tokenizers differ: the target uses {target.tokenizer_model or 'an unnamed'} tokenization, the draft {draft.tokenizer_model or 'an unnamed one'}")
    for key, what in (("tokenizer.ggml.bos_token_id", "beginning-of-text"), ("tokenizer.ggml.eos_token_id", "end-of-text"), ("tokenizer.ggml.add_bos_token", "add-BOS setting")):
        a, b = target.metadata.get(key), draft.metadata.get(key)
        if a != b:
            reasons.append(f"the {what} tokens differ: {a!r} in the target, {b!r} in the draft")
    n_target, n_draft = target.vocab_size, draft.vocab_size
    if abs(n_target - n_draft) > MAX_VOCAB_DIFFERENCE:
        reasons.append(f"the vocabularies differ in size: {n_target} tokens in the target, {n_draft} in the draft")
    target_tokens = target.metadata.get("tokenizer.ggml.tokens")
    draft_tokens = draft.metadata.get("tokenizer.ggml.tokens")
    if isinstance(target_tokens, (list, Strings)) and isinstance(draft_tokens, (list, Strings)):
        if not reasons and not _same_bytes(target_tokens, draft_tokens):  # the first differing token says nothing more when the vocabularies already differ
            for token_id, (a, b) in enumerate(zip(target_tokens, draft_tokens)):
                if a != b:
                    reasons.append(f"the vocabularies differ: token {token_id} is {a!r} in the target but {b!r} in the draft")
                    break
    elif target.tokenizer_pre != draft.tokenizer_pre:
        reasons.append(f"the tokenizers differ: pre-tokenizer {target.tokenizer_pre!r} in the target, {draft.tokenizer_pre!r} in the draft")
    return reasons


def _same_bytes(a: list[str] | Strings, b: list[str] | Strings) -> bool:
    """The ids both have hold the same bytes in both: the usual case, decided without decoding a token."""
    if isinstance(a, Strings) and isinstance(b, Strings):
        n = min(len(a), len(b))
        return a.prefix_bytes(n) == b.prefix_bytes(n)
    return False


def check_compatible(target: GGUFHeader, draft: GGUFHeader) -> None:
    reasons = incompatibilities(target, draft)
    if reasons:
        raise IncompatibleDraft("; ".join(reasons))
