"""Linux installers: the frozen bundle laid out as an AppDir and packed as a .deb, both validated.

    .venv/bin/python packaging/linux/package.py                   # freeze, AppDir, .deb, validate -> dist/
    .venv/bin/python packaging/linux/package.py --no-freeze       # reuse dist/lokal
    .venv/bin/python packaging/linux/package.py --self-test MODEL.gguf   # and self-test all three

The AppDir is what appimagetool turns into an .AppImage (the release workflow does that; the
tool is a download, not a package). The .deb installs the bundle into /usr/lib/lokal with
/usr/bin/lokal, the desktop entry, icons and AppStream metainfo; its Depends name the Debian
packages that own the system libraries the bundle links to and does not carry itself.
"""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))

import freeze  # noqa: E402  (packaging/freeze.py, beside this folder)

APP_ID = "org.lokal.Lokal"
PACKAGE = "lokal"
MAINTAINER = "Lokal developers <lokal@users.noreply.github.com>"
ICONS = ROOT / "app" / "resources" / "icons"
# desktop-file-utils and appstream validate; dpkg-deb packs; readelf finds the libraries linked to.
TOOLS = {"desktop-file-validate": "desktop-file-utils", "appstreamcli": "appstream", "dpkg-deb": "dpkg", "readelf": "binutils"}


class PackageError(RuntimeError):
    pass


def version() -> str:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def require_tools(*names: str) -> None:
    missing = [name for name in names if shutil.which(name) is None]
    if missing:
        packages = " ".join(sorted({TOOLS.get(name, name) for name in missing}))
        raise PackageError(f"missing tools: {', '.join(missing)}; install them with: apt-get install {packages}")


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        raise PackageError(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return done


def metainfo_text(release_version: str, date: str) -> str:
    return (HERE / f"{APP_ID}.metainfo.xml").read_text().replace("@VERSION@", release_version).replace("@DATE@", date)


def install_desktop_files(usr: Path, release_version: str, date: str) -> None:
    """The desktop entry, icons and metainfo, where the freedesktop specifications put them under usr/."""
    (usr / "share" / "applications").mkdir(parents=True, exist_ok=True)
    shutil.copy2(HERE / f"{APP_ID}.desktop", usr / "share" / "applications" / f"{APP_ID}.desktop")
    scalable = usr / "share" / "icons" / "hicolor" / "scalable" / "apps"
    raster = usr / "share" / "icons" / "hicolor" / "256x256" / "apps"
    for folder in (scalable, raster):
        folder.mkdir(parents=True, exist_ok=True)
    shutil.copy2(ICONS / "lokal.svg", scalable / f"{APP_ID}.svg")
    shutil.copy2(ICONS / "lokal.png", raster / f"{APP_ID}.png")
    (usr / "share" / "metainfo").mkdir(parents=True, exist_ok=True)
    (usr / "share" / "metainfo" / f"{APP_ID}.metainfo.xml").write_text(metainfo_text(release_version, date))


def install_bundle(bundle: Path, usr: Path) -> None:
    """The bundle in usr/lib/lokal, and usr/bin/lokal pointing at it (relative, so any root works)."""
    shutil.copytree(bundle, usr / "lib" / PACKAGE, symlinks=True)
    (usr / "bin").mkdir(parents=True, exist_ok=True)
    (usr / "bin" / PACKAGE).symlink_to(Path("..") / "lib" / PACKAGE / "lokal")


def make_appdir(bundle: Path, out: Path, release_version: str, date: str) -> Path:
    appdir = out / "Lokal.AppDir"
    if appdir.exists():
        shutil.rmtree(appdir)
    usr = appdir / "usr"
    install_bundle(bundle, usr)
    install_desktop_files(usr, release_version, date)
    shutil.copy2(HERE / "AppRun", appdir / "AppRun")
    (appdir / "AppRun").chmod(0o755)
    # appimagetool wants the desktop entry and its icon at the top, and .DirIcon for file managers.
    shutil.copy2(HERE / f"{APP_ID}.desktop", appdir / f"{APP_ID}.desktop")
    shutil.copy2(ICONS / "lokal.png", appdir / f"{APP_ID}.png")
    (appdir / ".DirIcon").symlink_to(f"{APP_ID}.png")
    return appdir


# ---- the .deb's Depends ------------------------------------------------------------------


def elf_files(tree: Path):
    for root, _dirs, files in os.walk(tree):
        for name in files:
            path = Path(root, name)
            if path.is_symlink() or not path.is_file():
                continue
            with path.open("rb") as f:
                if f.read(4) == b"\x7fELF":
                    yield path


def needed_libraries(tree: Path) -> set[str]:
    """Sonames that the ELF files under tree link to (DT_NEEDED)."""
    needed: set[str] = set()
    for path in elf_files(tree):
        done = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True)
        for line in done.stdout.splitlines():
            if "(NEEDED)" in line and "[" in line:
                needed.add(line.split("[", 1)[1].split("]", 1)[0])
    return needed


def system_library_paths() -> dict[str, str]:
    """soname -> path, from the dynamic linker's cache (this machine's architecture only)."""
    done = run(["ldconfig", "-p"] if shutil.which("ldconfig") else ["/sbin/ldconfig", "-p"])
    arch_tag = "x86-64" if os.uname().machine == "x86_64" else os.uname().machine
    paths: dict[str, str] = {}
    for line in done.stdout.splitlines()[1:]:
        if "=>" not in line:
            continue
        left, path = line.split("=>", 1)
        soname = left.strip().split(" ", 1)[0]
        if arch_tag in left or os.uname().machine not in ("x86_64",):
            paths.setdefault(soname, path.strip())
    return paths


def debian_depends(bundle: Path) -> list[str]:
    """The Debian packages owning each system library the bundle needs and does not carry."""
    carried = {path.name for path in bundle.rglob("*") if path.is_file() or path.is_symlink()}
    outside = sorted(needed_libraries(bundle) - carried)
    where = system_library_paths()
    unresolved = [soname for soname in outside if soname not in where]
    if unresolved:
        raise PackageError(
            "the bundle links to libraries this machine does not have, so their packages cannot be named: "
            + ", ".join(unresolved)
        )
    packages: set[str] = set()
    for soname in outside:
        path = os.path.realpath(where[soname])
        owner = subprocess.run(["dpkg-query", "-S", path], capture_output=True, text=True)
        if owner.returncode != 0:  # /lib is a link to /usr/lib on merged-/usr systems: try the other spelling
            other = path.replace("/usr/lib/", "/lib/", 1) if path.startswith("/usr/lib/") else path.replace("/lib/", "/usr/lib/", 1)
            owner = subprocess.run(["dpkg-query", "-S", other], capture_output=True, text=True)
        if owner.returncode != 0:
            raise PackageError(f"no Debian package owns {path} ({soname}), which the bundle links to")
        packages.add(owner.stdout.split(":", 1)[0].strip())
    return sorted(packages)


def make_deb(bundle: Path, out: Path, release_version: str, date: str, compression: str = "xz") -> Path:
    require_tools("dpkg-deb", "readelf", "dpkg-query")
    arch = run(["dpkg", "--print-architecture"]).stdout.strip()
    depends = debian_depends(bundle)
    with tempfile.TemporaryDirectory(prefix="lokal-deb-", dir=out) as scratch:
        root = Path(scratch) / "root"
        usr = root / "usr"
        install_bundle(bundle, usr)
        install_desktop_files(usr, release_version, date)
        doc = usr / "share" / "doc" / PACKAGE
        doc.mkdir(parents=True)
        (doc / "copyright").write_text(
            "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
            "Upstream-Name: Lokal\n\nFiles: *\nLicense: Apache-2.0\n"
        )
        installed_kb = (freeze.tree_size(root) + 1023) // 1024
        (root / "DEBIAN").mkdir()
        (root / "DEBIAN" / "control").write_text(
            f"Package: {PACKAGE}\n"
            f"Version: {release_version}\n"
            f"Architecture: {arch}\n"
            f"Maintainer: {MAINTAINER}\n"
            f"Installed-Size: {installed_kb}\n"
            f"Depends: {', '.join(depends)}\n"
            "Section: utils\n"
            "Priority: optional\n"
            "Description: chat with language models that run on your own computer\n"
            " Lokal is a desktop app for chatting with large language models that run\n"
            " entirely on your own machine, with llama.cpp in a separate process.\n"
        )
        deb = out / f"{PACKAGE}_{release_version}_{arch}.deb"
        run(["dpkg-deb", "--root-owner-group", f"-Z{compression}", "--build", str(root), str(deb)])
    return deb


# ---- checks ---------------------------------------------------------------------------------


def validate(appdir: Path) -> list[str]:
    """desktop-file-validate and appstreamcli on what the AppDir (and so the .deb) installs."""
    require_tools("desktop-file-validate", "appstreamcli")
    share = appdir / "usr" / "share"
    reports = []
    for command in (
        ["desktop-file-validate", str(share / "applications" / f"{APP_ID}.desktop")],
        ["desktop-file-validate", str(appdir / f"{APP_ID}.desktop")],
        ["appstreamcli", "validate", "--no-net", str(share / "metainfo" / f"{APP_ID}.metainfo.xml")],
    ):
        reports.append(run(command).stdout.strip())
    return reports


def install_deb(deb: Path, root: Path) -> Path:
    """Install the .deb with dpkg into an empty scratch root (its own dpkg database); returns usr/bin/lokal there.

    Dependencies are not installed there (the root holds nothing else), so they are checked
    against this machine's packages instead (check_depends_installed)."""
    require_tools("dpkg")
    admin = root / "var" / "lib" / "dpkg"
    for sub in ("info", "updates", "triggers"):
        (admin / sub).mkdir(parents=True, exist_ok=True)
    for name in ("status", "available"):
        (admin / name).touch()
    run(["dpkg", f"--root={root}", "--force-depends", "--force-script-chrootless", "--force-not-root", "-i", str(deb)])
    status = run(["dpkg-query", f"--admindir={admin}", "-W", "-f=${Status}", PACKAGE]).stdout
    if status.strip() != "install ok installed":
        raise PackageError(f"dpkg did not install {deb.name} into {root}: status {status!r}")
    return root / "usr" / "bin" / PACKAGE


def check_depends_installed(deb: Path) -> list[str]:
    """Each package the .deb depends on is installed here: the dependency list is real and satisfiable."""
    depends = run(["dpkg-deb", "-f", str(deb), "Depends"]).stdout.strip()
    names = [part.split("(")[0].strip() for part in depends.split(",") if part.strip()]
    missing = []
    for name in names:
        done = subprocess.run(["dpkg-query", "-W", "-f=${Status}", name], capture_output=True, text=True)
        if done.stdout.strip() != "install ok installed":
            missing.append(name)
    if missing:
        raise PackageError(f"{deb.name} depends on packages that are not installed here: {', '.join(missing)}")
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build Lokal's Linux AppDir and .deb (and the bundle they hold).")
    parser.add_argument("--dist", type=Path, default=freeze.DEFAULT_DIST, help="where everything goes (default dist/)")
    parser.add_argument("--work", type=Path, default=freeze.DEFAULT_WORK, help="PyInstaller's build folder")
    parser.add_argument("--no-freeze", action="store_true", help="use the bundle already in --dist")
    parser.add_argument("--compression", default="xz", choices=["xz", "zstd", "gzip", "none"], help="the .deb's compression")
    parser.add_argument("--self-test", type=Path, metavar="MODEL.gguf", help="self-test the bundle, the AppDir and the installed .deb")
    args = parser.parse_args(argv)
    dist = args.dist.resolve()
    dist.mkdir(parents=True, exist_ok=True)
    release_version, date = version(), datetime.date.today().isoformat()
    try:
        require_tools(*TOOLS)
        bundle = freeze.bundle_path(dist) if args.no_freeze else freeze.freeze(dist, args.work.resolve())
        appdir = make_appdir(bundle, dist, release_version, date)
        for report in validate(appdir):
            if report:
                print(report)
        deb = make_deb(bundle, dist, release_version, date, args.compression)
        print(f"package: {appdir}")
        print(f"package: {deb} ({deb.stat().st_size / 1e6:.1f} MB); depends: {', '.join(check_depends_installed(deb))}")
        if args.self_test is not None:
            model = args.self_test.resolve()
            with tempfile.TemporaryDirectory(prefix="lokal-deb-root-") as root:
                for label, program in (
                    ("bundle", freeze.executable(bundle)),
                    ("AppDir", appdir / "AppRun"),
                    ("installed .deb", install_deb(deb, Path(root))),
                ):
                    result = freeze.self_test(program, model)
                    print(f"{label}: {result.line}")
                    if result.returncode != 0:
                        return result.returncode
    except (PackageError, freeze.FreezeError) as exc:
        print(f"package: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
