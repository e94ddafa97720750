"""`python -m app.models.scan [DIR...]`: read the header of every GGUF file under the model folders.

It runs as a child process of the window (LocalModels starts it with QProcess):
a big vocabulary takes a few hundred milliseconds of pure Python to parse,
which must not happen on the GUI thread, and Python threads in the GUI
process are avoided altogether (PySide6 6.12 corrupted refcounts when one ran
next to the event loop). One JSON object per line on stdout.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from runtime.gguf.reader import GGUFError, read_file_header
from runtime.paths import models_dir

# Split files (-00002-of-00003.gguf) are loaded through their first part only.
_LATER_SHARD = re.compile(r"-0*([2-9]|\d{2,})-of-\d+\.gguf$")


@dataclass(frozen=True)
class LocalModelFile:
    path: str
    model: str  # what the files of one model share: "Qwen2.5 Coder 1.5B Instruct"
    quantization: str
    size: int
    architecture: str
    n_params: int


def huggingface_cache() -> Path:
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    home = os.environ.get("HF_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "huggingface")
    return Path(home) / "hub"


def search_dirs() -> list[Path]:
    return [models_dir(), huggingface_cache()]


def find_gguf_files(dirs: list[Path]) -> list[Path]:
    found: dict[str, Path] = {}
    for base in dirs:
        if not base.is_dir():
            continue
        for path in base.rglob("*.gguf"):
            if _LATER_SHARD.search(path.name) or not path.is_file():
                continue
            found.setdefault(os.path.realpath(path), path)
    return sorted(found.values(), key=lambda p: p.name.lower())


def model_name(header, path: Path) -> str:
    """What the quantizations of one model share: base name, size and (instruct/chat) variant, not the file's own tags."""
    meta = header.metadata
    base = str(meta.get("general.basename") or "").replace("-", " ").strip()
    if base:
        if base.islower():
            base = base.capitalize()
        parts = [base]
        if meta.get("general.size_label"):
            parts.append(str(meta["general.size_label"]))
        variant = str(meta.get("general.finetune") or "").split("-")[0]
        if variant.isalpha():
            parts.append(variant.capitalize() if variant.islower() else variant)
        return " ".join(parts)
    if header.name:
        return header.name
    return re.sub(r"[.-](i?q\d\w*|f16|f32|bf16)$", "", path.stem, flags=re.I)


def describe(path: Path) -> LocalModelFile:
    header = read_file_header(path)
    return LocalModelFile(str(path), model_name(header, path), header.quantization, path.stat().st_size, header.architecture, header.n_params)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    dirs = [Path(a) for a in argv] or search_dirs()
    paths = find_gguf_files(dirs)
    if not argv:
        # Files the user added from elsewhere (file dialog, drag and drop), remembered by the runtime.
        from runtime.models.local import added_paths

        known = {os.path.realpath(p) for p in paths}
        paths += [Path(p) for p in added_paths() if os.path.realpath(p) not in known and os.path.isfile(p)]
    for path in paths:
        try:
            line = {"file": dataclasses.asdict(describe(path))}
        except (GGUFError, OSError) as exc:
            line = {"error": {"path": str(path), "message": str(exc)}}
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
