"""What every benchmark does with its result: print it as JSON, and keep a copy in a file when asked."""

from __future__ import annotations

import json
from pathlib import Path


def publish(report: dict, path: Path | None = None) -> None:
    text = json.dumps(report, indent=2)
    if path is not None:
        path.write_text(text + "\n")
    print(text)
