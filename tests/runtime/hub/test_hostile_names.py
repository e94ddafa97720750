"""A crafted repository or a hostile mirror names paths that would leave the cache: each is refused by the
real runtime with a clear error before anything is written, and nothing appears outside the cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fake_hub import FakeFile, FakeRepo
from runtime.hub import names
from runtime.protocol import DownloadStartParams, ErrorCode, RpcError, methods

pytestmark = pytest.mark.slow

REPO = "lokal-test/hostile-GGUF"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
BYTES = b"GGUF" + bytes(4092)


def everything_under(root: Path) -> set[Path]:
    found = set()
    for folder, dirs, files in os.walk(root):  # links are listed, never followed
        found.update(Path(folder) / name for name in dirs + files)
    return found


def ups_to(tmp_path: Path, folder: Path) -> str:
    """The `../` that lead from `folder` back to the test's own directory (so a write that escapes lands there)."""
    return "../" * len(folder.relative_to(tmp_path).parts)


def hostile_case(kind: str, tmp_path: Path) -> tuple[FakeRepo, DownloadStartParams, str]:
    """(the repository the hub serves, what is asked for, the name the error must quote)."""
    repo_dir = tmp_path / "hf_home" / "hub" / ("models--" + REPO.replace("/", "--"))
    snapshot = repo_dir / "snapshots" / COMMIT
    file_name = {
        "dot-dot": ups_to(tmp_path, snapshot) + "escaped-dot-dot.gguf",
        "absolute": str(tmp_path / "escaped-absolute.gguf"),
        "backslash": "sub\\..\\..\\..\\..\\..\\..\\escaped-backslash.gguf",
        "drive letter": "C:\\escaped-drive.gguf",
        "drive-relative": "C:escaped-drive-relative.gguf",
        "UNC path": "\\\\server\\share\\escaped-unc.gguf",
        "control character": "escaped\n.gguf",
        "NUL": "escaped\x00.gguf",
    }.get(kind, "model-Q4_0.gguf")
    data = FakeFile(data=BYTES)
    commit, revision, quoted = COMMIT, "main", file_name
    if kind == "sha256":
        quoted = ups_to(tmp_path, repo_dir / "blobs") + "escaped-blob"
        data = FakeFile(data=BYTES, _sha256=quoted)
    if kind == "commit":
        commit = quoted = ups_to(tmp_path, repo_dir / "snapshots") + "escaped-commit"
    if kind == "revision":
        revision = quoted = ups_to(tmp_path, repo_dir / "refs") + "escaped-ref"
    return FakeRepo(files={file_name: data}, commit=commit), DownloadStartParams(REPO, files=[file_name], revision=revision), quoted


KINDS = ["dot-dot", "absolute", "backslash", "drive letter", "drive-relative", "UNC path", "control character", "NUL", "sha256", "commit", "revision"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_hostile_name_is_refused_and_nothing_is_written_outside_the_cache(hub, hub_runtime, tmp_path, kind):
    repo, params, quoted = hostile_case(kind, tmp_path)
    hub.repos[REPO] = repo
    hub.faults.any_revision = True  # a hostile mirror answers whatever is asked...
    hub.faults.any_path = repo.files[params.files[0]]  # ...and serves the bytes wherever a normalized URL points
    cache = tmp_path / "hf_home" / "hub"
    allowed = (cache, tmp_path / "lokal_data")
    before = everything_under(tmp_path)

    with pytest.raises(RpcError) as refused:
        hub_runtime.request(methods.DOWNLOAD_START, params, timeout=60)

    error = refused.value
    assert error.code in (ErrorCode.HUB_ERROR, ErrorCode.INVALID_PARAMS), error
    assert repr(quoted) in error.message and "nothing was written" in error.message, error.message
    escaped = sorted(p for p in everything_under(tmp_path) - before if not any(p.is_relative_to(a) for a in allowed) and p not in cache.parents)
    assert not escaped, f"written outside the cache: {escaped}"
    assert not list(cache.rglob("*escaped*"))
    # Nothing was planned either, and the runtime goes on answering.
    assert hub_runtime.request(methods.DOWNLOAD_LIST, timeout=30).downloads == []


@pytest.mark.parametrize(
    "name",
    ["../x", "a/../../x", "/etc/x", "//server/share/x", "\\\\server\\share\\x", "C:x", "C:/x", "a\\b", "a//b", "./a", "a/.", "", "a\tb", "a\x7fb"],
)
def test_unsafe_relative_paths_are_named_as_such(name):
    assert names.path_problem(name) is not None


@pytest.mark.parametrize("name", ["model-Q4_K_M.gguf", "Q4_K_M/model-00001-of-00002.gguf", "refs/pr/1", "v1.0", "a..b.gguf"])
def test_plain_relative_paths_pass(name):
    assert names.path_problem(name) is None


def test_rm_does_not_follow_a_link_in_the_cache_to_a_file_outside_it(hub, tmp_path):
    """A cache another tool (or a crafted archive) left with a link pointing elsewhere: `lokal rm` unlinks it only."""
    import subprocess
    import sys

    from gguf_files import write_gguf
    from sample_repos import hub_env

    elsewhere = tmp_path / "elsewhere" / "blobs"  # named like a blob folder, but not this repository's
    elsewhere.mkdir(parents=True)
    victim = write_gguf(elsewhere / "victim.gguf", metadata={"general.architecture": "llama"}, tensor_elements=64)
    snapshot = tmp_path / "hf_home" / "hub" / "models--lokal-test--crafted" / "snapshots" / COMMIT
    snapshot.mkdir(parents=True)
    (snapshot / "model-Q4_0.gguf").symlink_to(victim)

    env = {**os.environ, **hub_env(hub, tmp_path)}
    removed = subprocess.run([sys.executable, "-m", "app", "rm", "lokal-test/crafted"], capture_output=True, text=True, timeout=180, env=env)
    assert removed.returncode == 0, removed.stderr
    assert victim.exists(), "rm followed a link out of the cache and deleted the file it pointed to"
    assert not (snapshot / "model-Q4_0.gguf").is_symlink()
