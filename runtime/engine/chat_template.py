"""Renders a conversation to prompt text with the chat template stored in the GGUF file.

Templates come from downloaded files, so they run in jinja2's immutable
sandbox: no attribute access to Python internals, no mutation of inputs.
"""

from __future__ import annotations

import datetime
from typing import Sequence

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

# For models whose file carries no template: ChatML, which most small instruct models use.
CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


class TemplateError(ValueError):
    pass


def _raise_exception(message: str) -> None:
    raise TemplateError(f"the model's chat template refused the conversation: {message}")


def _strftime_now(fmt: str) -> str:
    return datetime.datetime.now().strftime(fmt)


class ChatTemplate:
    def __init__(self, source: str | None, bos_token: str = "", eos_token: str = ""):
        self.from_model = bool(source)
        self.source = source or CHATML_TEMPLATE
        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, undefined=jinja2.ChainableUndefined)
        env.globals.update(raise_exception=_raise_exception, strftime_now=_strftime_now)
        try:
            self._template = env.from_string(self.source)
        except jinja2.TemplateError as exc:
            raise TemplateError(f"the model's chat template does not parse: {exc}") from None
        self.bos_token = bos_token
        self.eos_token = eos_token

    def render(self, messages: Sequence[dict], add_generation_prompt: bool = True) -> str:
        try:
            return self._template.render(
                messages=list(messages),
                add_generation_prompt=add_generation_prompt,
                bos_token=self.bos_token,
                eos_token=self.eos_token,
            )
        except TemplateError:
            raise
        except Exception as exc:  # a template is untrusted code: any failure is the template's
            raise TemplateError(f"the model's chat template failed: {exc}") from None
