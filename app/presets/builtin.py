"""The presets every Lokal has: in the code, not the database, so they come in the window's language and a
newer Lokal can improve them. Each has a stable key; `lokal serve --preset` takes the key or the English name.

Their sampling stays within what small local models do well: low temperatures where the answer must be
right (code, translation), a higher one where variety is the point (writing).
"""

from __future__ import annotations

from typing import cast

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from app.presets.preset import Preset, Sampling

CONTEXT = "Presets"

# key: (name, system prompt, sampling). QT_TRANSLATE_NOOP marks the texts for lupdate and returns them as they are.
_BUILTIN = cast(dict[str, tuple[str, str, Sampling]], {
    "assistant": (
        QT_TRANSLATE_NOOP("Presets", "General assistant"),
        QT_TRANSLATE_NOOP("Presets", "You are a helpful assistant. Answer clearly and concisely, and say so when you are not sure."),
        Sampling(temperature=0.7),
    ),
    "code-reviewer": (
        QT_TRANSLATE_NOOP("Presets", "Code reviewer"),
        QT_TRANSLATE_NOOP(
            "Presets",
            "You are a careful senior software engineer reviewing code. Point out bugs, risky patterns and unclear "
            "names, the most important first, and suggest concrete fixes with short code examples.",
        ),
        Sampling(temperature=0.2, top_p=0.9),
    ),
    "translator": (
        QT_TRANSLATE_NOOP("Presets", "Translator English ↔ Indonesian"),
        QT_TRANSLATE_NOOP(
            "Presets",
            "You are a translator. If the user's text is in English, translate it into Indonesian; otherwise translate "
            "it into English. Keep the meaning, the tone and the formatting, and reply with the translation only.",
        ),
        Sampling(temperature=0.2),
    ),
    "writer": (
        QT_TRANSLATE_NOOP("Presets", "Creative writer"),
        QT_TRANSLATE_NOOP("Presets", "You are an imaginative writer. Write vivid, original prose and verse in the style the user asks for."),
        Sampling(temperature=1.0, top_p=0.95),
    ),
    "precise": (
        QT_TRANSLATE_NOOP("Presets", "Precise answers"),
        QT_TRANSLATE_NOOP("Presets", "Answer precisely and briefly. Give facts, steps or numbers, without filler."),
        Sampling(temperature=0.0),
    ),
})


def builtin_presets(translate: bool = True) -> list[Preset]:
    """The built-in presets, named and worded in the window's language (`translate`) or in English (the CLI)."""
    def tr(text: str) -> str:
        return QCoreApplication.translate(CONTEXT, text) if translate else text

    return [Preset(tr(name), tr(prompt), sampling, builtin=key) for key, (name, prompt, sampling) in _BUILTIN.items()]


def builtin_names() -> set[str]:
    """Every name a built-in preset goes by (its key, its English name, and its name in the window's language), case-folded."""
    names = set(_BUILTIN) | {name for name, _prompt, _sampling in _BUILTIN.values()}
    names |= {p.name for p in builtin_presets()}
    return {n.casefold() for n in names}


def find_builtin(name: str) -> Preset | None:
    """The built-in preset called `name` (its key, or its English or translated name; any case)."""
    wanted = name.strip().casefold()
    for key, (english, prompt, sampling) in _BUILTIN.items():
        translated = QCoreApplication.translate(CONTEXT, english)
        if wanted in (key, english.casefold(), translated.casefold()):
            return Preset(translated, QCoreApplication.translate(CONTEXT, prompt), sampling, builtin=key)
    return None
