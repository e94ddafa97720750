"""The curated catalog: chat models with GGUF repositories, each with its draft partner if it has one."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from runtime.protocol import CatalogEntry


def catalog_path() -> Path:
    # A frozen app keeps resources/ next to the code in its bundle directory.
    base = Path(getattr(sys, "_MEIPASS", Path(__file__).resolve().parents[2]))
    return base / "resources" / "catalog.json"


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
