"""Which models on disk can draft for a target: the header check hub.draft_check makes
(runtime/speculative/compat.py), run on local files, and the `auto` choice among them.

Auto is the smallest compatible model that is smaller than the target: a draft model pays only
when a step of it costs much less than a step of the target, so one as big as the target never
does (it stays choosable by hand, e.g. a copy of the target to try the plumbing).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

from runtime.gguf.reader import GGUFError, read_file_header
from runtime.speculative.compat import incompatibilities


@dataclass(frozen=True)
class DraftOption:
    path: str
    size: int
    reasons: list[str] = field(default_factory=list)  # why it cannot draft for the target; empty: it can

    @property
    def compatible(self) -> bool:
        return not self.reasons


def options(target_path: str, candidates: Iterable[tuple[str, int]], same_file: Iterable[str] = (), read_header: Callable = read_file_header) -> list[DraftOption]:
    """Every candidate (path, size) but the target itself (and `same_file`, its other paths), with why it cannot
    draft; `read_header` reads a file's GGUF header (the window's remembers those it read)."""
    target = read_header(target_path)
    skip = {os.path.realpath(p) for p in (target_path, *same_file)}
    found = []
    for path, size in candidates:
        if os.path.realpath(path) in skip:
            continue
        try:
            reasons = incompatibilities(target, read_header(path))
        except (GGUFError, OSError) as exc:
            reasons = [f"its header cannot be read: {exc}"]
        found.append(DraftOption(path, size, reasons))
    return found


def auto_choice(target_size: int, found: Iterable[DraftOption]) -> Optional[DraftOption]:
    """The smallest compatible option smaller than the target; None if there is none."""
    usable = [o for o in found if o.compatible and o.size < target_size]
    return min(usable, key=lambda o: (o.size, o.path)) if usable else None


def resolve(setting: str, target_path: str, candidates: Iterable[tuple[str, int]]) -> Optional[str]:
    """The draft model's path for a `draft` setting: "none" None, "auto" the auto choice (None if none fits),
    a path that path (the runtime checks it fits at load, and says why not)."""
    if setting == "none":
        return None
    if setting != "auto":
        return setting
    choice = auto_choice(os.path.getsize(target_path), options(target_path, candidates))
    return choice.path if choice is not None else None
