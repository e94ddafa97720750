"""Where a model's reasoning starts and ends, read from its own chat template and vocabulary.

Two families cover the reasoning models people run in 2026:
- `<think>…</think>` (Qwen3, DeepSeek-R1 and its distills, Phi-4-reasoning, SmolLM3, QwQ, Magistral's
  `[THINK]…[/THINK]` spelled its own way). Some templates open the block in the prompt (DeepSeek-R1
  distills always; Qwen3 and SmolLM3 close it there instead when thinking is off): whether the reply
  starts inside a block is read off the rendered prompt (`opens_block`), not guessed from the model's name.
- gpt-oss's harmony format: messages in channels, `<|channel|>analysis<|message|>…<|end|>` is the
  reasoning and `<|channel|>final<|message|>…` the answer.
A model whose template and vocabulary name no markers still gets `<think>` recognised when its reply
simply begins with it (`named` False): a fine-tune or a grammar can make any model think that way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal

HARMONY_START = "<|start|>"
HARMONY_CHANNEL = "<|channel|>"
HARMONY_MESSAGE = "<|message|>"
HARMONY_END = "<|end|>"
HARMONY_RETURN = "<|return|>"
HARMONY_CALL = "<|call|>"
HARMONY_ANALYSIS = "analysis"


@dataclass(frozen=True)
class ReasoningSyntax:
    kind: Literal["think", "harmony"]
    open: str  # what begins the reasoning
    close: str  # what ends it (harmony: the end of the analysis message)
    closing: str  # what a reasoning budget writes to end the block and begin the answer
    named: bool = True  # the template or the vocabulary names these markers (else only a reply's own start is looked at)

    @property
    def markers(self) -> tuple[str, ...]:
        """The marker texts a reply is written with, for reading them out of special tokens."""
        if self.kind == "harmony":
            return (HARMONY_START, HARMONY_CHANNEL, HARMONY_MESSAGE, HARMONY_END, HARMONY_RETURN, HARMONY_CALL)
        return (self.open, self.close)


THINK = ReasoningSyntax("think", "<think>", "</think>", "\n</think>\n\n")
THINK_BRACKETS = ReasoningSyntax("think", "[THINK]", "[/THINK]", "[/THINK]")  # Magistral
HARMONY = ReasoningSyntax(
    "harmony",
    f"{HARMONY_CHANNEL}{HARMONY_ANALYSIS}{HARMONY_MESSAGE}",
    HARMONY_END,
    f"{HARMONY_END}{HARMONY_START}assistant{HARMONY_CHANNEL}final{HARMONY_MESSAGE}",
)
UNNAMED_THINK = ReasoningSyntax("think", THINK.open, THINK.close, THINK.closing, named=False)


def syntax_for(template: str | None, vocabulary_has: Callable[[str], bool] = lambda _text: False) -> ReasoningSyntax:
    """The reasoning markers of a model: from its chat template's text, else its vocabulary (a marker that is one
    token of its own), else `<think>` recognised only at a reply's start."""
    source = template or ""
    if HARMONY_CHANNEL in source and HARMONY_MESSAGE in source:
        return HARMONY
    for syntax in (THINK, THINK_BRACKETS):
        if syntax.close in source:
            return syntax
    for syntax in (THINK, THINK_BRACKETS):
        if vocabulary_has(syntax.open) and vocabulary_has(syntax.close):
            return syntax
    if vocabulary_has(HARMONY_CHANNEL) and vocabulary_has(HARMONY_MESSAGE):
        return HARMONY
    return UNNAMED_THINK


def opens_block(prompt: str, syntax: ReasoningSyntax) -> bool:
    """Whether the rendered prompt leaves the reply inside a reasoning block: it ends with the open marker
    (whitespace after it allowed), as DeepSeek-R1 distills' `<｜Assistant｜><think>\\n` does. A block the
    prompt opens and closes (Qwen3 with thinking off: `<think>\\n\\n</think>\\n\\n`) leaves it outside."""
    return prompt.rstrip().endswith(syntax.open)
