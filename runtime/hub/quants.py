"""A repository's GGUF files grouped into quantization levels.

A level is one model at one quantization: a single file, or the shards of a
split file (`name-00001-of-00003.gguf`) shown as one entry with their total
size. Multimodal projectors (mmproj) and imatrix files are not models and are
left out of the levels; a vision model's projector is found with `projectors`
and travels with whichever level is downloaded (one projector serves them all).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Longest first, so Q4_K_M wins over Q4_K and IQ2_XXS over IQ2_XS.
_QUANT_RE = re.compile(
    r"(?<![A-Za-z0-9])("
    r"IQ[1-4]_(?:XXS|XS|S|M|NL)|I?Q[2-8]_K_(?:XL|S|M|L)|Q[2-8]_K|Q[4-8]_[01]|Q2_K_S"
    r"|TQ[12]_0|MXFP4(?:_MOE)?|BF16|F16|F32|FP16|FP32"
    r")(?![A-Za-z0-9])",
    re.IGNORECASE,
)
SPLIT_RE = re.compile(r"-(\d{5})-of-(\d{5})\.gguf$", re.IGNORECASE)
_NOT_MODELS = re.compile(r"(^|/)(mmproj|imatrix)|\.imatrix", re.IGNORECASE)
_PROJECTOR = re.compile(r"(^|/)mmproj[^/]*\.gguf$", re.IGNORECASE)
# Which projector to take when a repository has several: full precision is what llama.cpp's converters write and
# what the ggml-org repositories offer first; a quantized projector costs image quality for little memory.
_PROJECTOR_ORDER = ["F16", "BF16", "Q8_0", "F32"]

# Display order: smallest precision first, the way users read a quant menu.
_ORDER = ["IQ1", "IQ2", "Q2", "IQ3", "Q3", "IQ4", "Q4", "Q5", "Q6", "Q8", "MXFP4", "TQ", "BF16", "F16", "F32"]


@dataclass
class RemoteFile:
    path: str
    size: int
    sha256: str | None  # from the hub's LFS pointer; None for a file kept in git itself


@dataclass
class Level:
    name: str  # "Q4_K_M"; the file's stem when it names no known quantization
    files: list[RemoteFile] = field(default_factory=list)

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def first(self) -> RemoteFile:
        return self.files[0]


def quant_name(path: str) -> str | None:
    matches = _QUANT_RE.findall(path.rsplit("/", 1)[-1])
    if not matches:
        return None
    name = matches[-1].upper()
    return {"FP16": "F16", "FP32": "F32"}.get(name, name)


def _sort_key(name: str) -> tuple[int, str]:
    for i, prefix in enumerate(_ORDER):
        if name.startswith(prefix):
            return (i, name)
    return (len(_ORDER), name)


def group_levels(files: list[RemoteFile]) -> list[Level]:
    """Group GGUF files into levels; split shards are ordered by their part number."""
    groups: dict[str, Level] = {}
    for f in files:
        if not f.path.lower().endswith(".gguf") or _NOT_MODELS.search(f.path):
            continue
        base = SPLIT_RE.sub(".gguf", f.path)
        name = quant_name(base) or base.rsplit("/", 1)[-1][: -len(".gguf")]
        # Two different files with the same quant (e.g. in two folders) stay separate levels.
        key = name if name not in groups or SPLIT_RE.sub(".gguf", groups[name].first.path) == base else base
        groups.setdefault(key, Level(key)).files.append(f)
    for level in groups.values():
        level.files.sort(key=lambda f: int(m.group(1)) if (m := SPLIT_RE.search(f.path)) else 0)
    return sorted(groups.values(), key=lambda lv: _sort_key(lv.name))


def incomplete_split(level: Level) -> str | None:
    """Why a split level cannot be used (a shard is missing), or None."""
    m = SPLIT_RE.search(level.first.path)
    if not m:
        return None
    expected = int(m.group(2))
    if len(level.files) != expected:
        return f"{level.name}: {len(level.files)} of {expected} parts are in the repository"
    return None


def is_projector(path: str) -> bool:
    return bool(_PROJECTOR.search(path))


def projectors(files: list[RemoteFile]) -> list[RemoteFile]:
    """The repository's multimodal projectors (mmproj*.gguf), in the order they are preferred."""
    found = [f for f in files if is_projector(f.path)]

    def rank(f: RemoteFile) -> tuple[int, str]:
        name = quant_name(f.path) or ""
        return (_PROJECTOR_ORDER.index(name) if name in _PROJECTOR_ORDER else len(_PROJECTOR_ORDER), f.path)

    return sorted(found, key=rank)


def pick_projector(files: list[RemoteFile], preferred: str | None = None) -> RemoteFile | None:
    """The projector to download with a level: `preferred` (the catalog's choice) when the repository has it,
    else the best precision there is; None for a repository without one (a text model)."""
    found = projectors(files)
    return next((f for f in found if f.path == preferred), found[0] if found else None)


def find_level(levels: list[Level], quant: str | None) -> Level | None:
    if not levels:
        return None
    if quant is None:
        preferred = [lv for lv in levels if lv.name == "Q4_K_M"]
        return preferred[0] if preferred else levels[0]
    for lv in levels:
        if lv.name.upper() == quant.upper():
            return lv
    return None
