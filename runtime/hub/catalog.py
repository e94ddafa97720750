"""The curated catalog: models with GGUF repositories, what each is for (chat, reasoning, coder, vision,
embedding), a vision model's projector, and each one's draft partner if it has one.

The list is package data (catalog.json) with a version of its own, so a user
and a bug report can say which list they saw. It is read strictly: a damaged
or hand-edited file fails with an error that names the entry and the field,
rather than showing a browser with a model that cannot be downloaded. What the
hub says about each entry (the repository, its quant files, the projector, the
draft's tokenizer) is checked offline against recorded metadata in
tests/data/hub/ (scripts/refresh_catalog_fixtures.py records it again).
"""

from __future__ import annotations

import json
import typing
from dataclasses import dataclass
from pathlib import Path

from runtime.protocol import CatalogEntry, CatalogKind

KINDS: tuple[str, ...] = typing.get_args(CatalogKind)


class CatalogError(ValueError):
    """catalog.json is not what the runtime can serve; the message names the entry and the field."""


@dataclass
class Catalog:
    version: str
    entries: list[CatalogEntry]

    def entry(self, repo: str) -> CatalogEntry | None:
        return next((e for e in self.entries if e.repo == repo), None)


def catalog_path() -> Path:
    # Package data beside this module: in a checkout, an installed copy and the frozen bundle alike.
    return Path(__file__).resolve().parent / "catalog.json"


def read(path: Path | None = None) -> Catalog:
    data = json.loads((path or catalog_path()).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("models"), list):
        raise CatalogError("catalog: 'models' must be a list of entries")
    entries = [_entry(i, m) for i, m in enumerate(data["models"])]
    _check_references(entries)
    return Catalog(version=str(data.get("version", "")), entries=entries)


def load(path: Path | None = None) -> list[CatalogEntry]:
    return read(path).entries


def _entry(index: int, m: object) -> CatalogEntry:
    where = f"catalog: models[{index}]"
    if not isinstance(m, dict):
        raise CatalogError(f"{where}: an entry is an object")
    for key in ("repo", "name"):
        if not isinstance(m.get(key), str) or not m[key]:
            raise CatalogError(f"{where}.{key}: required text")
    where = f"catalog: {m['repo']}"
    if m["repo"].count("/") != 1:
        raise CatalogError(f"{where}.repo: a repository id is owner/name")
    kind = m.get("kind", "chat")
    if kind not in KINDS:
        raise CatalogError(f"{where}.kind: {kind!r} is not one of {', '.join(KINDS)}")
    mmproj = m.get("mmproj")
    if (kind == "vision") != (mmproj is not None):
        raise CatalogError(f"{where}.mmproj: a vision entry names its projector file, and only a vision entry does")
    if mmproj is not None and (not isinstance(mmproj, str) or not mmproj.lower().endswith(".gguf")):
        raise CatalogError(f"{where}.mmproj: the projector is a .gguf file name")
    if kind == "embedding" and m.get("draft"):
        raise CatalogError(f"{where}.draft: an embedding model generates nothing to draft")
    return CatalogEntry(
        repo=m["repo"],
        name=m["name"],
        family=m.get("family", ""),
        params=m.get("params", ""),
        quant=m.get("quant", "Q4_K_M"),
        draft=m.get("draft"),
        description=m.get("description", ""),
        kind=kind,
        mmproj=mmproj,
        thinking=bool(m.get("thinking", kind == "reasoning")),
    )


def _check_references(entries: list[CatalogEntry]) -> None:
    repos = [e.repo for e in entries]
    twice = sorted({r for r in repos if repos.count(r) > 1})
    if twice:
        raise CatalogError(f"catalog: listed twice: {', '.join(twice)}")
    for e in entries:
        if e.draft is not None and e.draft not in repos:
            raise CatalogError(f"catalog: {e.repo}.draft: {e.draft} is not itself in the catalog")
        if e.draft == e.repo:
            raise CatalogError(f"catalog: {e.repo}.draft: a model cannot draft for itself")
