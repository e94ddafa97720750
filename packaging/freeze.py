"""Freeze Lokal into one PyInstaller onedir bundle, and run a bundle's --self-test the way a user's machine would.

    .venv/bin/python packaging/freeze.py                      # -> dist/lokal/ (dist/Lokal.app on macOS)
    .venv/bin/python packaging/freeze.py --self-test MODEL.gguf  # freeze, then self-test the bundle
    .venv/bin/python packaging/freeze.py --program PATH/lokal --self-test MODEL.gguf   # an installed app

The same script runs on Linux, macOS and Windows (the release workflow calls it on each).
The self-test starts the frozen executable from a scratch directory with an almost empty
environment, so nothing from the build machine (the venv, PYTHONPATH, the repository) can
stand in for something the bundle lacks.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "packaging" / "lokal.spec"
DEFAULT_DIST = ROOT / "dist"
DEFAULT_WORK = ROOT / "build" / "pyinstaller"
SELF_TEST_TIMEOUT_S = 600

# Environment variables a desktop session always has and the self-test keeps: on Windows the
# system ones without which nothing starts; elsewhere none (HOME is set to a scratch folder).
WINDOWS_KEEP = ("SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "TEMP", "TMP", "COMSPEC", "PATHEXT")


class FreezeError(RuntimeError):
    pass


@dataclass
class SelfTestRun:
    returncode: int
    stdout: str
    stderr: str

    @property
    def line(self) -> str:
        """The one line the self-test printed: its result, or its reason for failing."""
        text = self.stdout.strip() if self.returncode == 0 else (self.stderr.strip() or self.stdout.strip())
        lines = [line for line in text.splitlines() if line.startswith("lokal self-test:")]
        return lines[-1] if lines else text[-2000:]


def executable(bundle: Path) -> Path:
    """The program inside a bundle folder (dist/lokal) or a macOS .app."""
    if bundle.suffix == ".app":
        return bundle / "Contents" / "MacOS" / "lokal"
    return bundle / ("lokal.exe" if sys.platform == "win32" else "lokal")


def bundle_path(dist: Path) -> Path:
    return dist / ("Lokal.app" if sys.platform == "darwin" else "lokal")


def freeze(dist: Path = DEFAULT_DIST, work: Path = DEFAULT_WORK, log=print) -> Path:
    """Run PyInstaller on packaging/lokal.spec; returns the bundle (dist/lokal, or dist/Lokal.app on macOS)."""
    try:
        import PyInstaller  # noqa: F401
    except ImportError as exc:
        raise FreezeError("PyInstaller is not installed: .venv/bin/pip install -e '.[package]'") from exc
    command = [
        sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
        "--distpath", str(dist), "--workpath", str(work), str(SPEC),
    ]
    log(f"freeze: {' '.join(command)}")
    started = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise FreezeError(f"PyInstaller failed ({done.returncode}):\n{done.stderr[-6000:]}")
    bundle = bundle_path(dist)
    if not executable(bundle).is_file():
        raise FreezeError(f"PyInstaller finished but {executable(bundle)} is missing")
    if sys.platform.startswith("linux"):
        strip_debug_info(bundle)
    log(f"freeze: {bundle} in {time.monotonic() - started:.0f} s, {tree_size(bundle) / 1e6:.1f} MB")
    return bundle


def has_debug_info(path: Path) -> bool:
    done = subprocess.run(["readelf", "-S", "-W", str(path)], capture_output=True, text=True)
    return done.returncode == 0 and ".debug_" in done.stdout


def strip_debug_info(bundle: Path) -> int:
    """Drop DWARF debug sections from the Linux libraries that carry them (a source-built Python's
    libpython alone is 17 MB of them); returns the bytes saved.

    Only debug sections, and only from files that have them: PyInstaller's own strip (everything,
    every file) rewrites libraries that auditwheel patched and breaks them, numpy's OpenBLAS first
    ("ELF load command address/offset not page-aligned").
    """
    if shutil.which("strip") is None or shutil.which("readelf") is None:
        raise FreezeError("strip and readelf are needed (apt-get install binutils)")
    saved = 0
    for root, _dirs, files in os.walk(bundle):
        for name in files:
            path = Path(root, name)
            if path.is_symlink() or Path(root).name.endswith(".libs"):
                continue
            with path.open("rb") as f:
                if f.read(4) != b"\x7fELF":
                    continue
            if has_debug_info(path):
                before = path.stat().st_size
                done = subprocess.run(["strip", "--strip-debug", str(path)], capture_output=True, text=True)
                if done.returncode != 0:
                    raise FreezeError(f"strip --strip-debug {path} failed: {done.stderr.strip()}")
                saved += before - path.stat().st_size
    return saved


def tree_size(path: Path) -> int:
    """Bytes on disk of every regular file under path (symlinks count once, as links)."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            file = Path(root, name)
            if not file.is_symlink():
                total += file.stat().st_size
    return total


def minimal_env(home: Path) -> dict[str, str]:
    """What a freshly logged-in user's program gets at the least, and nothing from this build."""
    env = {"HOME": str(home), "QT_QPA_PLATFORM": "offscreen", "LANG": "C.UTF-8"}
    if sys.platform == "win32":
        env.update({k: os.environ[k] for k in WINDOWS_KEEP if k in os.environ})
        env["USERPROFILE"] = str(home)
    return env


def self_test(program: Path, model: Path, timeout_s: float = SELF_TEST_TIMEOUT_S, extra_env: dict | None = None) -> SelfTestRun:
    """Run `program --self-test model` from an empty scratch directory with a minimal environment."""
    with tempfile.TemporaryDirectory(prefix="lokal-self-test-run-") as scratch:
        home = Path(scratch) / "home"
        home.mkdir()
        env = minimal_env(home) | (extra_env or {})
        try:
            done = subprocess.run(
                [str(program), "--self-test", str(model)],
                cwd=scratch, env=env, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired as exc:
            return SelfTestRun(124, exc.stdout or "", f"lokal self-test: FAILED: {program} ran past {timeout_s:.0f} s")
    return SelfTestRun(done.returncode, done.stdout, done.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Freeze Lokal with PyInstaller, and/or self-test the frozen app.")
    parser.add_argument("--dist", type=Path, default=DEFAULT_DIST, help="where the bundle goes (default dist/)")
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK, help="PyInstaller's build folder")
    parser.add_argument("--no-freeze", action="store_true", help="use the bundle already in --dist")
    parser.add_argument("--program", type=Path, metavar="PATH", help="self-test this installed executable instead (no freeze)")
    parser.add_argument("--self-test", type=Path, metavar="MODEL.gguf", help="then run the bundle's --self-test with this model")
    args = parser.parse_args(argv)
    if args.program is not None:
        if args.self_test is None:
            parser.error("--program needs --self-test MODEL.gguf")
        program = args.program.resolve()
    else:
        try:
            bundle = bundle_path(args.dist) if args.no_freeze else freeze(args.dist.resolve(), args.work.resolve())
        except FreezeError as exc:
            print(f"freeze: {exc}", file=sys.stderr)
            return 1
        if args.self_test is None:
            return 0
        program = executable(bundle)
    run = self_test(program, args.self_test.resolve())
    print(run.line, file=sys.stdout if run.returncode == 0 else sys.stderr)
    return run.returncode


if __name__ == "__main__":
    sys.exit(main())
