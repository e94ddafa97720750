"""Every curated catalog entry checked against its repository's metadata (tests/data/hub/), served by the
loopback hub: the repository id answers, the recommended level exists under the repository's quant naming,
a vision entry's projector is there (and only vision entries have one), an embedding entry is a pooling
model, and each draft partner passes the same header check the runtime applies before drafting."""

from __future__ import annotations

import json

import pytest

from catalog_fixtures import FIXTURES, all_fixtures, fake_repo
from fake_hub import FakeHub
from runtime.gguf.reader import GGUFHeader
from runtime.hub import catalog
from runtime.hub.catalog import CatalogError
from runtime.hub.quants import find_level, incomplete_split, pick_projector, projectors
from runtime.hub.repo import list_repo
from runtime.hub.service import HubService
from runtime.protocol import DraftCheckParams, Empty, ModelRef
from runtime.speculative.compat import incompatibilities
from sample_repos import hub_env

ENTRIES = catalog.load()
BY_REPO = {e.repo: e for e in ENTRIES}


@pytest.fixture
def catalog_hub(tmp_path, monkeypatch):
    """The loopback hub with every catalog repository; the recommended level of each starts with its GGUF header."""
    fixtures = all_fixtures()
    repos = {}
    for repo, data in fixtures.items():
        entry = BY_REPO.get(repo)
        listing = [s["rfilename"] for s in data["siblings"]]
        header_files = set()
        if entry is not None:
            from runtime.hub.quants import RemoteFile, group_levels

            level = find_level(group_levels([RemoteFile(n, 1, None) for n in listing]), entry.quant)
            header_files = {level.first.path} if level else set()
        repos[repo] = fake_repo(data, header_files)
    with FakeHub(repos) as server:
        for key, value in hub_env(server, tmp_path).items():
            monkeypatch.setenv(key, value)
        monkeypatch.delenv("HF_TOKEN", raising=False)
        yield server


def test_the_catalog_has_a_version_and_every_kind_of_model():
    current = catalog.read()
    assert current.version
    kinds = {e.kind for e in current.entries}
    assert kinds == {"chat", "reasoning", "coder", "vision", "embedding"}
    assert all(e.description and "\n" not in e.description for e in current.entries)  # one line each
    reasoning = {e.repo for e in current.entries if e.kind == "reasoning"}
    for needed in ("Qwen/Qwen3-0.6B-GGUF", "Qwen/Qwen3-32B-GGUF", "Qwen/Qwen3-30B-A3B-GGUF", "ggml-org/gpt-oss-20b-GGUF",
                   "unsloth/Phi-4-mini-reasoning-GGUF", "unsloth/SmolLM3-3B-GGUF", "bartowski/DeepSeek-R1-Distill-Qwen-7B-GGUF"):
        assert needed in reasoning


def test_every_entry_has_one_fixture_that_says_whether_it_was_recorded():
    fixtures = all_fixtures()
    assert set(fixtures) == set(BY_REPO), "a fixture per catalog entry, and none for a repository that left it"
    for repo, data in fixtures.items():
        assert isinstance(data["recorded"], bool) and data["source"], repo
        assert len(data["sha"]) == 40 and data["siblings"], repo


def test_every_entry_resolves_on_the_loopback_hub(catalog_hub):
    problems = []
    for e in ENTRIES:
        listing = list_repo(e.repo)
        level = find_level(listing.levels, e.quant)
        if level is None:
            problems.append(f"{e.repo}: no level {e.quant} among {[lv.name for lv in listing.levels]}")
            continue
        if incomplete_split(level):
            problems.append(f"{e.repo}: {incomplete_split(level)}")
        found = projectors(listing.files)
        if e.kind == "vision":
            chosen = pick_projector(listing.files, e.mmproj)
            if chosen is None or chosen.path != e.mmproj:
                problems.append(f"{e.repo}: the projector {e.mmproj} is not in the repository ({[f.path for f in found]})")
        elif found:
            problems.append(f"{e.repo}: has projectors {[f.path for f in found]} but is not marked vision")
        metadata = json.loads((FIXTURES / (e.repo.replace("/", "--") + ".json")).read_text())["gguf"]["metadata"]
        pooling = metadata.get(f"{metadata['general.architecture']}.pooling_type")
        if (e.kind == "embedding") != (pooling is not None):
            problems.append(f"{e.repo}: kind {e.kind}, but pooling_type is {pooling!r}")
    assert problems == []


def test_every_draft_partner_passes_the_header_check_over_the_loopback_hub(catalog_hub, tmp_path):
    service = HubService(lambda *_: None, cache_dir=tmp_path / "cache")
    pairs = [(e, BY_REPO[e.draft]) for e in ENTRIES if e.draft]
    assert len(pairs) >= 10
    for target, draft in pairs:
        result = service.draft_check(DraftCheckParams(target=ModelRef(repo=target.repo, quant=target.quant), draft=ModelRef(repo=draft.repo, quant=draft.quant)))
        assert result.compatible, f"{target.repo} with {draft.repo}: {result.reasons}"
        assert result.draft.n_layers < result.target.n_layers or result.draft.tensor_bytes < result.target.tensor_bytes, target.repo


def test_the_header_check_refuses_a_pair_that_only_looks_related():
    """The distill of R1 into Llama 3.1 renames the special tokens: no Llama 3.2 draft, which the check says."""
    def header(repo: str) -> GGUFHeader:
        data = json.loads((FIXTURES / (repo.replace("/", "--") + ".json")).read_text())
        return GGUFHeader(version=3, metadata=data["gguf"]["metadata"], tensors=[], header_size=0)

    reasons = incompatibilities(header("bartowski/DeepSeek-R1-Distill-Llama-8B-GGUF"), header("bartowski/Llama-3.2-1B-Instruct-GGUF"))
    assert any("end-of-text" in r for r in reasons)
    assert not BY_REPO["bartowski/DeepSeek-R1-Distill-Llama-8B-GGUF"].draft


def test_a_vision_level_lists_its_projector_and_its_fit_counts_it(catalog_hub, tmp_path):
    from runtime.protocol import HubQuantsParams

    service = HubService(lambda *_: None, cache_dir=tmp_path / "cache")
    result = service.quants(HubQuantsParams("ggml-org/gemma-3-4b-it-GGUF", n_ctx=4096))
    q4 = next(lv for lv in result.levels if lv.name == "Q4_K_M")
    assert q4.mmproj == "mmproj-model-f16.gguf" and q4.mmproj_size == 851_000_000
    assert [lv.name for lv in result.levels] == ["Q4_K_M", "Q8_0"]  # the projector is not a level
    assert q4.fit is not None and "vision projector mmproj-model-f16.gguf" in q4.fit.detail
    assert q4.fit.weights >= q4.size + q4.mmproj_size - 1_000_000  # the model's bytes (less its header) and the projector's
    text_only = service.quants(HubQuantsParams("ggml-org/gemma-3-1b-it-GGUF", n_ctx=4096))
    assert all(lv.mmproj is None and lv.mmproj_size == 0 for lv in text_only.levels)


def test_the_catalog_method_sends_the_version(catalog_hub, tmp_path):
    result = HubService(lambda *_: None, cache_dir=tmp_path / "cache").catalog(Empty())
    assert result.version == catalog.read().version and len(result.entries) == len(ENTRIES)


@pytest.mark.parametrize(
    "change, field",
    [
        ({"kind": "picture"}, "Qwen/Qwen3-0.6B-GGUF.kind"),
        ({"kind": "vision"}, "Qwen/Qwen3-0.6B-GGUF.mmproj"),
        ({"mmproj": "mmproj-x-f16.gguf"}, "Qwen/Qwen3-0.6B-GGUF.mmproj"),
        ({"draft": "nobody/Not-Listed-GGUF"}, "Qwen/Qwen3-0.6B-GGUF.draft"),
        ({"repo": "no-owner"}, "no-owner.repo"),
    ],
)
def test_a_damaged_catalog_names_the_entry_and_field(tmp_path, change, field):
    data = json.loads(catalog.catalog_path().read_text())
    data["models"][0].update(change)
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(data))
    with pytest.raises(CatalogError, match=field.replace(".", r"\.")):
        catalog.read(path)


def test_the_refresh_script_records_what_the_hub_serves(catalog_hub, tmp_path):
    """scripts/refresh_catalog_fixtures.py against the loopback hub (as it would run against huggingface.co):
    the listing, the sha256 of each file and the header's metadata come back as a recorded fixture."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from catalog_fixtures import load_fixture

    root = Path(__file__).resolve().parents[3]
    out = tmp_path / "recorded"
    proc = subprocess.run(
        [sys.executable, str(root / "scripts" / "refresh_catalog_fixtures.py"), "--only", "Qwen/Qwen3-4B-GGUF", "--no-tests", "--out", str(out)],
        env={**os.environ}, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.glob("*.json")) == ["Qwen--Qwen3-0.6B-GGUF.json", "Qwen--Qwen3-4B-GGUF.json"]  # with its draft
    recorded, served = json.loads((out / "Qwen--Qwen3-4B-GGUF.json").read_text()), load_fixture("Qwen/Qwen3-4B-GGUF")
    assert recorded["recorded"] is True and catalog_hub.url in recorded["source"]
    assert recorded["sha"] == served["sha"] and recorded["siblings"] == served["siblings"]
    assert recorded["gguf"]["file"] == "Qwen3-4B-Q4_K_M.gguf"
    assert recorded["gguf"]["metadata"] == served["gguf"]["metadata"]


def test_the_refresh_script_names_a_repository_that_is_not_in_the_catalog(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[3] / "scripts" / "refresh_catalog_fixtures.py"
    proc = subprocess.run([sys.executable, str(script), "--only", "nobody/Nothing-GGUF", "--out", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "nobody/Nothing-GGUF" in proc.stderr
