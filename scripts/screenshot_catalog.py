"""Render the model browser showing the curated catalog into docs/screenshots/catalog.png (offscreen).

    .venv/bin/python scripts/screenshot_catalog.py

The browser talks to a real runtime process, which talks to the loopback hub
of the tests serving the catalog's repository metadata (tests/data/hub/): no
network is needed, and the levels, sizes and fit labels shown are what the
runtime computes from that metadata on this machine. A vision model is
selected, so the picture shows its level sizes with the projector that comes
with them.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

OUT = ROOT / "docs" / "screenshots" / "catalog.png"
SHOWN = "ggml-org/gemma-3-4b-it-GGUF"


def wait(app, condition, timeout_s: float) -> bool:
    """Run Qt's event loop until `condition()` holds, at most `timeout_s` seconds."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        app.processEvents()
        if condition():
            return True
        time.sleep(0.02)  # a script's own event pump, not a test
    return False


def main() -> int:
    from PySide6.QtWidgets import QApplication

    from catalog_fixtures import all_fixtures, fake_repo
    from fake_hub import FakeHub
    from runtime.hub import catalog
    from runtime.hub.quants import RemoteFile, find_level, group_levels
    from sample_repos import hub_env

    app = QApplication.instance() or QApplication(sys.argv)
    from app.ui import language

    language.install("en")  # the English plural forms ("1 level", "2 levels")
    entries = {e.repo: e for e in catalog.load()}
    repos = {}
    for repo, data in all_fixtures().items():
        level = find_level(group_levels([RemoteFile(s["rfilename"], 1, None) for s in data["siblings"]]), entries[repo].quant)
        repos[repo] = fake_repo(data, {level.first.path} if level else set())

    from app.catalog.browser import ModelBrowserDialog
    from app.catalog.service import CatalogService
    from app.runtime_link.link import ConnectionState, RuntimeLink

    with FakeHub(repos) as hub, tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, **hub_env(hub, Path(tmp))}
        env.pop("HF_TOKEN", None)
        link = RuntimeLink(env=env, auto_restart=False)
        link.start()
        try:
            if not wait(app, lambda: link.state == ConnectionState.READY, 60):
                print("the runtime did not start", file=sys.stderr)
                return 1
            dialog = ModelBrowserDialog(CatalogService(link))
            dialog.resize(1280, 640)
            dialog.show()
            if not wait(app, lambda: dialog.repos.rowCount() > 0, 30):
                print(f"no catalog: {dialog.status.text()}", file=sys.stderr)
                return 1
            row = next(r for r in range(dialog.repos.rowCount()) if dialog.repos.row(r).repo == SHOWN)
            dialog.repo_view.selectRow(row)
            dialog.repo_view.scrollTo(dialog.repos.index(max(row - 6, 0), 0))
            if not wait(app, lambda: dialog.levels.rowCount() > 0 and "compatible" in dialog.draft_label.text(), 60):
                print(f"no levels: {dialog.status.text()} {dialog.draft_label.text()}", file=sys.stderr)
                return 1
            wait(app, lambda: False, 0.3)  # let the views lay out
            OUT.parent.mkdir(parents=True, exist_ok=True)
            dialog.grab().save(str(OUT))
            print(OUT)
            return 0
        finally:
            link.close()


if __name__ == "__main__":
    sys.exit(main())
