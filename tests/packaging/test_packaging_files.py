"""The installer sources checked with the tools that consume them, without building anything:
the desktop entry and AppStream metainfo, the NSIS script (compiled by Debian's makensis),
the release workflow (GitHub's schema, its matrix, its shell steps; its logic is scripts/release.sh,
tested in test_release_script.py), the shell scripts, the icons."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import PACKAGING, RELEASE_TARGETS, ROOT, linux_package, require

WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
NSIS_SCRIPT = PACKAGING / "windows" / "lokal.nsi"
DESKTOP = PACKAGING / "linux" / f"{linux_package.APP_ID}.desktop"


def run(command, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=120, **kwargs)


# ---- Linux desktop integration ------------------------------------------------------------


def test_desktop_entry_is_valid():
    require("desktop-file-validate")
    done = run(["desktop-file-validate", DESKTOP])
    assert done.returncode == 0 and done.stdout.strip() == "", done.stdout + done.stderr


def test_an_invalid_desktop_entry_is_caught(tmp_path):
    """The validator the test relies on does reject a broken entry (no Name, an unknown key)."""
    require("desktop-file-validate")
    broken = tmp_path / "broken.desktop"
    broken.write_text(DESKTOP.read_text().replace("Name=Lokal\n", "").replace("Terminal=false", "Terminal=maybe"))
    assert run(["desktop-file-validate", broken]).returncode != 0


def test_metainfo_is_valid_and_matches_the_desktop_entry(tmp_path):
    require("appstreamcli")
    metainfo = tmp_path / f"{linux_package.APP_ID}.metainfo.xml"
    metainfo.write_text(linux_package.metainfo_text("1.2.3", "2026-01-31"))
    done = run(["appstreamcli", "validate", "--no-net", metainfo])
    assert done.returncode == 0, done.stdout + done.stderr
    text = metainfo.read_text()
    assert f"<launchable type=\"desktop-id\">{DESKTOP.name}</launchable>" in text
    assert '<release version="1.2.3" date="2026-01-31"/>' in text
    assert "@VERSION@" not in text


def test_metainfo_without_a_release_date_is_caught(tmp_path):
    require("appstreamcli")
    metainfo = tmp_path / f"{linux_package.APP_ID}.metainfo.xml"
    metainfo.write_text(linux_package.metainfo_text("1.2.3", "not-a-date"))
    assert run(["appstreamcli", "validate", "--no-net", metainfo]).returncode != 0


def test_shell_scripts_pass_shellcheck():
    require("shellcheck")
    # scripts/gpu-check.sh needs an NVIDIA GPU to run: shellcheck is what checks it on machines without one.
    scripts = [PACKAGING / "linux" / "AppRun", PACKAGING / "macos" / "make_dmg.sh", ROOT / "scripts" / "release.sh",
               ROOT / "scripts" / "dev.sh", ROOT / "scripts" / "gpu-check.sh", ROOT / "scripts" / "build-vulkan.sh"]
    done = run(["shellcheck", "--severity=warning", *scripts])
    assert done.returncode == 0, done.stdout


def test_dmg_script_refuses_something_that_is_not_an_app(tmp_path):
    done = run(["bash", PACKAGING / "macos" / "make_dmg.sh", tmp_path, tmp_path / "out.dmg"])
    assert done.returncode == 2
    assert "is not an .app bundle" in done.stderr


# ---- Windows installer --------------------------------------------------------------------


@pytest.fixture
def stand_in_bundle(tmp_path) -> Path:
    """A bundle-shaped folder (the real one only exists on Windows): the script's File /r takes it all."""
    bundle = tmp_path / "lokal"
    (bundle / "_internal" / "llama_cpp" / "lib").mkdir(parents=True)
    (bundle / "lokal.exe").write_bytes(b"MZ stand-in")
    (bundle / "_internal" / "llama_cpp" / "lib" / "llama.dll").write_bytes(b"MZ stand-in")
    return bundle


def makensis(*defines: str, cwd: Path) -> subprocess.CompletedProcess:
    require("makensis")
    return run(["makensis", "-V4", *defines, NSIS_SCRIPT], cwd=cwd)


def test_nsis_script_compiles_into_a_windows_installer(stand_in_bundle, tmp_path):
    out = tmp_path / "Lokal-9.9.9-windows-x64-setup.exe"
    done = makensis("-DVERSION=9.9.9", f"-DSOURCE_DIR={stand_in_bundle}", f"-DOUTFILE={out}", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    assert re.search(r'File: "lokal\.exe"', done.stdout)
    assert re.search(r'File: "llama\.dll"', done.stdout), "the bundle's subfolders are packed too"
    data = out.read_bytes()
    assert data[:2] == b"MZ" and b"Nullsoft" in data
    assert "WriteUninstaller" in done.stdout and "CreateShortcut" in done.stdout


def test_nsis_script_compiles_with_paths_relative_to_where_it_runs(stand_in_bundle, tmp_path):
    """As the workflow runs it: -NOCD, the bundle and the output named relative to the repository."""
    done = makensis("-NOCD", "-DVERSION=9.9.9", "-DSOURCE_DIR=lokal", "-DOUTFILE=relative-setup.exe", cwd=stand_in_bundle.parent)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    assert (stand_in_bundle.parent / "relative-setup.exe").read_bytes()[:2] == b"MZ"


def test_nsis_script_names_the_cuda_variant(stand_in_bundle, tmp_path):
    out = tmp_path / "cuda-setup.exe"
    done = makensis("-DVERSION=9.9.9", "-DVARIANT=CUDA", f"-DSOURCE_DIR={stand_in_bundle}", f"-DOUTFILE={out}", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    assert 'Name: "Lokal (CUDA)"' in done.stdout


def test_nsis_script_without_a_version_stops_with_the_reason(stand_in_bundle, tmp_path):
    done = makensis(f"-DSOURCE_DIR={stand_in_bundle}", cwd=tmp_path)
    assert done.returncode != 0
    assert "pass /DVERSION=x.y.z" in done.stdout + done.stderr


def test_nsis_script_without_a_bundle_stops_with_the_reason(tmp_path):
    done = makensis("-DVERSION=9.9.9", f"-DSOURCE_DIR={tmp_path / 'missing'}", f"-DOUTFILE={tmp_path / 'x.exe'}", cwd=tmp_path)
    assert done.returncode != 0
    assert not (tmp_path / "x.exe").exists()


# ---- the release workflow -------------------------------------------------------------------


@pytest.fixture(scope="module")
def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def check_workflow_schema(path: Path) -> subprocess.CompletedProcess:
    tool = Path(sys.executable).parent / "check-jsonschema"
    if not tool.exists():
        pytest.fail("check-jsonschema is missing: pip install -e '.[test]'")
    return run([tool, "--builtin-schema", "vendor.github-workflows", path])


def test_workflow_matches_githubs_schema():
    done = check_workflow_schema(WORKFLOW)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_workflow_that_breaks_the_schema_is_caught(tmp_path):
    broken = tmp_path / "release.yml"
    broken.write_text(WORKFLOW.read_text().replace("runs-on: ${{ matrix.os }}", "runs_on: ${{ matrix.os }}", 1))
    assert check_workflow_schema(broken).returncode != 0


def steps(workflow) -> list[dict]:
    return workflow["jobs"]["build"]["steps"]


def test_workflow_runs_the_release_script_for_every_target(workflow):
    """The workflow sets up the runner and calls scripts/release.sh; the steps themselves are in the
    script (tests/packaging/test_release_script.py dry-runs every target and runs linux-x64)."""
    matrix = {entry["target"]: entry for entry in workflow["jobs"]["build"]["strategy"]["matrix"]["include"]}
    assert set(matrix) == set(RELEASE_TARGETS)
    assert matrix["linux-x64"]["os"] == "ubuntu-22.04"  # the oldest glibc GitHub still hosts
    assert matrix["macos-arm64"]["os"].startswith("macos") and matrix["windows-x64-cuda"]["os"].startswith("windows")
    assert matrix["windows-x64-cuda"]["cuda"] and "cuda" not in matrix["windows-x64"]
    assert workflow["jobs"]["build"]["env"]["TARGET"] == "${{ matrix.target }}"
    (release,) = [step for step in steps(workflow) if "scripts/release.sh" in step.get("run", "")]
    assert release["run"].strip() == 'bash scripts/release.sh "$TARGET"' and "if" not in release
    runs = "\n".join(step.get("run", "") for step in steps(workflow))
    for moved in ("--self-test", "packaging/freeze.py", "package.py", "makensis -", "codesign", "pip install"):
        assert moved not in runs, f"{moved}: the release steps belong in scripts/release.sh"


def test_workflow_caches_the_wheel_by_what_builds_it(workflow):
    (cache,) = [step for step in steps(workflow) if step.get("uses", "").startswith("actions/cache")]
    assert cache["with"]["path"] == "wheelhouse"  # release.sh's default LOKAL_WHEELHOUSE
    assert "matrix.target" in cache["with"]["key"] and "hashFiles('scripts/release.sh')" in cache["with"]["key"]


def test_workflow_sets_up_signing_only_when_the_secrets_exist(workflow):
    signing = [step for step in steps(workflow) if "signing" in step.get("name", "")]
    assert {s["name"] for s in signing} == {"Put the macOS signing certificate in a keychain", "Put the Windows signing certificate where signtool finds it"}
    env = workflow["jobs"]["build"]["env"]
    for step in signing:
        gate = step["if"]
        secrets = re.findall(r"env\.(\w+) != ''", gate)
        assert secrets, f"{step['name']} runs without checking for its secret: {gate}"
        for name in secrets:
            assert env[name] == f"${{{{ secrets.{name} }}}}"
    windows = next(s for s in signing if "Windows" in s["name"])
    assert "WINDOWS_PFX=" in windows["run"] and "SIGNTOOL=" in windows["run"]  # what release.sh's signing steps wait for
    for name in ("MACOS_SIGN_IDENTITY", "APPLE_ID", "APPLE_TEAM_ID", "APPLE_APP_PASSWORD", "WINDOWS_CERTIFICATE_PASSWORD"):
        assert env[name] == f"${{{{ secrets.{name} }}}}"


def test_workflow_uploads_every_installer(workflow):
    upload = [step for step in steps(workflow) if step.get("uses", "").startswith("actions/upload-artifact")]
    assert len(upload) == 1
    paths = upload[0]["with"]["path"]
    for pattern in ("*.deb", "*.AppImage", "*.dmg", "*-setup.exe"):
        assert pattern in paths
    assert upload[0]["with"]["if-no-files-found"] == "error"


def test_workflow_shell_steps_parse_and_pass_shellcheck(workflow, tmp_path):
    """bash -n and shellcheck on every bash step (GitHub gives it bash -e), with each
    ${{ expression }} replaced by a plain word."""
    require("shellcheck")
    checked = 0
    all_steps = steps(workflow) + workflow["jobs"]["publish"]["steps"]
    for index, step in enumerate(all_steps):
        if "run" not in step or step.get("shell", "bash") != "bash":
            continue
        script = tmp_path / f"step{index}.sh"
        script.write_text("#!/bin/bash\n" + re.sub(r"\$\{\{[^}]*\}\}", "EXPR", step["run"]))
        done = run(["bash", "-n", script])
        assert done.returncode == 0, f"{step.get('name')}: {done.stderr}"
        done = run(["shellcheck", "--severity=warning", script])
        assert done.returncode == 0, f"{step.get('name')}: {done.stdout}"
        checked += 1
    assert checked >= 4


# ---- icons ------------------------------------------------------------------------------------


def test_icons_render_from_the_svg(tmp_path):
    done = run([sys.executable, PACKAGING / "make_icons.py", "--out", tmp_path], env={"QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "lokal.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "lokal.ico").read_bytes()[:4] == b"\x00\x00\x01\x00"
    assert (tmp_path / "lokal.icns").read_bytes()[:4] == b"icns"
    # The committed icons the installers use are the sizes the spec and the .desktop expect.
    png = (ROOT / "app" / "resources" / "icons" / "lokal.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[16:24] == (256).to_bytes(4, "big") * 2
    assert (ROOT / "app" / "resources" / "icons" / "lokal.ico").read_bytes()[:4] == b"\x00\x00\x01\x00"
    assert (ROOT / "app" / "resources" / "icons" / "lokal.icns").read_bytes()[:4] == b"icns"


def test_icons_refuse_a_broken_svg(tmp_path):
    svg = tmp_path / "broken.svg"
    svg.write_text("<svg")
    done = run([sys.executable, PACKAGING / "make_icons.py", "--svg", svg, "--out", tmp_path], env={"QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path)})
    assert done.returncode != 0
    assert "is not a valid SVG" in done.stderr + done.stdout
