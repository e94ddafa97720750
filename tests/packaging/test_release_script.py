"""scripts/release.sh, the release workflow's logic: its dry run for every target (each step printed,
each file a step names checked), and the build step that compiles the translations for a plain pip
install. tests/packaging/test_packaging_linux.py runs it for real for linux-x64 (the `linux_build` fixture)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import RELEASE_TARGETS, ROOT, fresh_clone, offline_pip_env, require

SCRIPT = ROOT / "scripts" / "release.sh"

# The steps each target runs, in order (the headers release.sh prints).
STEPS = {
    "linux-x64": ["wheel", "install", "model", "package", "appimage", "fetch"],
    "macos-arm64": ["wheel", "install", "model", "freeze", "sign-app", "dmg", "notarize", "fetch"],
    "windows-x64": ["wheel", "install", "model", "freeze", "fetch", "sign-app", "installer", "sign-installer", "installed"],
}
STEPS["windows-x64-cuda"] = STEPS["windows-x64"]
SIGNING = ("MACOS_SIGN_IDENTITY", "APPLE_ID", "APPLE_TEAM_ID", "APPLE_APP_PASSWORD", "SIGNTOOL", "WINDOWS_PFX", "WINDOWS_CERTIFICATE_PASSWORD")


def dry_run(*args: str, script: Path = SCRIPT, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "PYTHON": sys.executable}  # no signing variables
    return subprocess.run(["bash", str(script), "--dry-run", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


def headers(output: str, target: str) -> list[str]:
    prefix = f"release {target}: ["
    return [line[len(prefix):].split("]", 1)[0] for line in output.splitlines() if line.startswith(prefix)]


@pytest.mark.parametrize("target", RELEASE_TARGETS)
def test_dry_run_prints_each_step_and_finds_every_file_it_names(target):
    done = dry_run(target)
    assert done.returncode == 0, done.stderr[-3000:]
    assert headers(done.stderr, target) == STEPS[target]
    assert "MISSING" not in done.stderr
    assert done.stderr.count(": ok\n") >= 8  # the files the steps read, each checked
    assert done.stderr.rstrip().endswith("dry run done: every file the steps name is there")
    commands = [line for line in done.stderr.splitlines() if line.startswith("  $ ")]
    wheel = next(line for line in commands if "pip wheel" in line)
    # portable CPU code on every build machine; llama.cpp's multimodal library (pictures, #31)
    for flag in ("-DGGML_NATIVE=OFF", "-DLLAVA_BUILD=ON"):
        assert flag in wheel, (target, wheel)
    assert "--no-cache-dir" in wheel  # pip's wheel cache ignores CMAKE_ARGS: it could hand back a wheel without libmtmd
    assert ("-DGGML_METAL=ON" in wheel) == (target == "macos-arm64")
    assert ("-DGGML_CUDA=ON" in wheel and "-DGGML_CUDA_NO_VMM=ON" in wheel) == (target == "windows-x64-cuda")
    assert ("-DGGML_AVX2=ON" in wheel) == (target != "macos-arm64")
    self_tests = [line for line in commands if "--self-test" in line]
    assert len(self_tests) >= 2, commands  # the frozen app, and what the installer installs (or the signed app)
    assert any("fetch-model" in line for line in commands) and any(line.startswith("  $ cmp ") for line in commands)


def test_dry_run_shows_the_signing_steps_and_what_they_wait_for():
    done = dry_run("macos-arm64")
    assert "(runs when MACOS_SIGN_IDENTITY are set; MACOS_SIGN_IDENTITY is not)" in done.stderr
    assert "codesign --deep --force --timestamp --options runtime --entitlements packaging/macos/entitlements.plist" in done.stderr
    assert "xcrun notarytool submit" in done.stderr
    done = dry_run("windows-x64")
    assert "(runs when SIGNTOOL WINDOWS_PFX WINDOWS_CERTIFICATE_PASSWORD are set; SIGNTOOL is not)" in done.stderr


def test_windows_installer_step_names_the_variant_and_installs_silently():
    cuda, cpu = dry_run("windows-x64-cuda").stderr, dry_run("windows-x64").stderr
    assert "-DVARIANT=CUDA" in cuda and "-DVARIANT=CUDA" not in cpu
    assert "-DOUTFILE=dist\\\\Lokal-" in cpu and "windows-x64-setup.exe" in cpu
    assert "check_cuda_bundled" in cuda and "freeze.py --no-freeze --self-test" in cuda
    for output in (cuda, cpu):
        assert "Start-Process\\ -Wait\\ -FilePath" in output and "freeze.py --program" in output  # printed shell-quoted


def test_a_missing_file_fails_the_dry_run_and_is_named(tmp_path):
    """A copy of what the script reads, less the NSIS script: the Windows dry run names it; Linux's does not need it."""
    copy = tmp_path / "lokal"
    for name in ("scripts", "packaging", "runtime/models", "app/resources/icons"):
        shutil.copytree(ROOT / name, copy / name)
    for name in ("pyproject.toml", "setup.py"):
        shutil.copy2(ROOT / name, copy / name)
    (copy / "packaging" / "windows" / "lokal.nsi").unlink()
    done = dry_run("windows-x64", script=copy / "scripts" / "release.sh", cwd=copy)
    assert done.returncode == 1
    assert "needs packaging/windows/lokal.nsi: MISSING" in done.stderr
    assert "release: windows-x64: missing files:\n  [installer] packaging/windows/lokal.nsi" in done.stderr
    assert dry_run("linux-x64", script=copy / "scripts" / "release.sh", cwd=copy).returncode == 0


def test_an_unknown_target_or_option_is_refused_with_the_choices():
    done = dry_run("linux-arm64")
    assert done.returncode == 2
    assert "unknown target 'linux-arm64'; choose from: linux-x64 macos-arm64 windows-x64 windows-x64-cuda" in done.stderr
    done = dry_run("--frobnicate", "linux-x64")
    assert done.returncode == 2 and "unknown option --frobnicate" in done.stderr
    assert dry_run().returncode == 2


def test_release_script_passes_shellcheck():
    require("shellcheck")
    done = subprocess.run(["shellcheck", "--severity=style", str(SCRIPT)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout


@pytest.mark.slow
def test_a_wheel_built_by_plain_pip_from_a_fresh_clone_carries_the_compiled_translations(tmp_path):
    """`pip install .` as a new user runs it, on a clone with no .qm and no scripts/dev.sh: the build step
    (setup.py, pyside6-lrelease from build-system.requires) compiles them into the wheel pip installs."""
    require("git")
    clone = fresh_clone(tmp_path / "lokal")
    i18n = clone / "app" / "resources" / "i18n"
    assert list(i18n.glob("*.qm")) == [] and sorted(p.name for p in i18n.glob("*.ts")) == ["lokal_en.ts", "lokal_id.ts", "qt_id.ts"]
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(tmp_path / "wheels"), str(clone)],
        cwd=tmp_path, env=offline_pip_env(), capture_output=True, text=True, timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (wheel,) = (tmp_path / "wheels").glob("lokal-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        sizes = {info.filename: info.file_size for info in archive.infolist()}
    for name in ("lokal_en.qm", "lokal_id.qm", "qt_id.qm"):
        assert sizes.get(f"app/resources/i18n/{name}", 0) > 0, f"{name} is not in {wheel.name}"
    assert not [name for name in sizes if name.endswith(".ts")]  # the sources stay out of the package
