"""The curated catalog's repositories as the loopback hub serves them, from the metadata in tests/data/hub/.

Each fixture is one repository: its file list with sizes and sha256 (the hub's
model_info with files_metadata), its commit, and the GGUF metadata of the
recommended level (architecture, tokenizer, shape). A fixture says whether it
was recorded from huggingface.co (scripts/refresh_catalog_fixtures.py) or
constructed by hand ("recorded": false, with its "source").

Files carry no weights: the hub serves a GGUF header built from the recorded
metadata, then zeros, up to the recorded size, so listing, quant naming, the
fit and the draft check all run as they would against the real hub, and a
download is never asked of them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fake_hub import FakeFile, FakeRepo
from gguf_files import gguf_header

FIXTURES = Path(__file__).resolve().parent / "data" / "hub"


def fixture_path(repo: str) -> Path:
    return FIXTURES / (repo.replace("/", "--") + ".json")


def load_fixture(repo: str) -> dict[str, Any]:
    return json.loads(fixture_path(repo).read_text(encoding="utf-8"))


def all_fixtures() -> dict[str, dict[str, Any]]:
    return {data["repo"]: data for data in (json.loads(p.read_text(encoding="utf-8")) for p in sorted(FIXTURES.glob("*.json")))}


def fake_repo(fixture: dict[str, Any], header_files: set[str] = frozenset()) -> FakeRepo:  # type: ignore[assignment]
    """The repository of a fixture; the files named in `header_files` start with a GGUF header made from the
    fixture's metadata, whose one tensor fills the file (so the fit sees the recorded size as weights)."""
    files = {}
    for s in fixture["siblings"]:
        name, size, lfs = s["rfilename"], int(s["size"]), s.get("lfs")
        data = b""
        if name in header_files:
            head = gguf_header(fixture["gguf"]["metadata"], 0)
            data = gguf_header(fixture["gguf"]["metadata"], max(size - len(head), 0) // 4)
        if lfs:
            files[name] = FakeFile(data=data, declared_size=size, _sha256=lfs["sha256"])
        else:
            files[name] = FakeFile(data=b"x" * size, lfs=False)
    return FakeRepo(files=files, commit=fixture["sha"], gated=bool(fixture.get("gated")))
