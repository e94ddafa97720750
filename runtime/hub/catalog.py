"""The curated catalog: chat models with GGUF repositories, each with its draft partner if it has one."""

from __future__ import annotations

import json
from pathlib import Path

from runtime.protocol import CatalogEntry


def catalog_path() -> Path:
    # Package data beside this module: in a checkout, an installed copy and the frozen bundle alike.
    return Path(__file__).resolve().parent / "catalog.json"


def load(path: Path | None = None) -> list[CatalogEntry]:
    data = json.loads((path or catalog_path()).read_text(encoding="utf-8"))
    return [
        CatalogEntry(
            repo=m["repo"],
            name=m["name"],
            family=m.get("family", ""),
            params=m.get("params", ""),
            quant=m.get("quant", "Q4_K_M"),
            draft=m.get("draft"),
            description=m.get("description", ""),
        )
        for m in data["models"]
    ]
