"""Can a small model draft for a bigger one? Decided from both GGUF headers, before any download.

Speculative decoding verifies the draft's token ids with the target, so both
must speak the same vocabulary: same tokenizer model and pre-tokenizer, nearly
the same vocabulary size, the same special token ids, and the same token text
for the ids they share (llama.cpp's speculative example applies the same
rules; it allows a vocabulary size difference of up to 128 padding tokens).
"""

from __future__ import annotations

from runtime.gguf.reader import GGUFHeader

MAX_VOCAB_SIZE_DIFFERENCE = 128
FIRST_CHECKED_TOKEN = 5  # ids below are control tokens that models label differently
SPECIAL_TOKENS = ("bos_token_id", "eos_token_id")


def incompatibilities(target: GGUFHeader, draft: GGUFHeader) -> list[str]:
    """Why `draft` cannot draft for `target`; an empty list means it can."""
    reasons = []
    if target.tokenizer_model != draft.tokenizer_model:
        reasons.append(f"tokenizer model differs: {target.tokenizer_model!r} vs {draft.tokenizer_model!r}")
    if target.tokenizer_pre != draft.tokenizer_pre:
        reasons.append(f"pre-tokenizer differs: {target.tokenizer_pre!r} vs {draft.tokenizer_pre!r}")
    difference = abs(target.vocab_size - draft.vocab_size)
    if difference > MAX_VOCAB_SIZE_DIFFERENCE:
        reasons.append(f"vocabulary sizes differ by {difference}: {target.vocab_size} vs {draft.vocab_size}")
    for key in SPECIAL_TOKENS:
        a = target.metadata.get(f"tokenizer.ggml.{key}")
        b = draft.metadata.get(f"tokenizer.ggml.{key}")
        if a != b:
            reasons.append(f"{key.replace('_id', '')} differs: {a} vs {b}")
    if not reasons:
        t_tokens = target.metadata.get("tokenizer.ggml.tokens")
        d_tokens = draft.metadata.get("tokenizer.ggml.tokens")
        if isinstance(t_tokens, list) and isinstance(d_tokens, list):
            for i in range(FIRST_CHECKED_TOKEN, min(len(t_tokens), len(d_tokens))):
                if t_tokens[i] != d_tokens[i]:
                    reasons.append(f"token {i} differs: {t_tokens[i]!r} vs {d_tokens[i]!r}")
                    break
    return reasons
