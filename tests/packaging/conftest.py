"""Fixtures for the installer tests: the packaging scripts, the tools they call, and one Linux
build (bundle, AppDir, .deb) shared by the whole session, because freezing takes minutes."""

from __future__ import annotations

import datetime
import shutil
import sys
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
}


def require(*tools: str) -> None:
    """A missing tool fails the test and says how to get it: a check that cannot run is not a pass."""
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        debs = " ".join(sorted({TOOLS.get(tool, tool) for tool in missing}))
        pytest.fail(f"missing {', '.join(missing)}: apt-get install {debs} (scripts/dev.sh test does it as root)")


class LinuxBuild:
    def __init__(self, bundle: Path, appdir: Path, deb: Path, version: str):
        self.bundle = bundle
        self.appdir = appdir
        self.deb = deb
        self.version = version

    @property
    def program(self) -> Path:
        return freeze.executable(self.bundle)


@pytest.fixture(scope="session")
def linux_build(tmp_path_factory) -> LinuxBuild:
    """Freeze Lokal, lay out the AppDir and pack the .deb, once, the way packaging/linux/package.py does."""
    if not sys.platform.startswith("linux"):
        pytest.fail("the Linux installer tests run on Linux")
    require("readelf", "strip", "dpkg-deb", "desktop-file-validate", "appstreamcli")
    out = tmp_path_factory.mktemp("linux-build")
    bundle = freeze.freeze(out / "dist", out / "work", log=print)
    version, date = linux_package.version(), datetime.date.today().isoformat()
    appdir = linux_package.make_appdir(bundle, out / "dist", version, date)
    # zstd rather than the release's xz: the same package, packed in seconds instead of minutes.
    deb = linux_package.make_deb(bundle, out / "dist", version, date, compression="zstd")
    return LinuxBuild(bundle, appdir, deb, version)
