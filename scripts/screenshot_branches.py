"""docs/screenshots/branches.png: a reply written three times, showing the second of them (◀ 2/3 ▶).

    .venv/bin/python scripts/screenshot_branches.py

The window, the runtime and the starter model are real (scripts/screenshots.py opens them): the
question is sent, its reply regenerated twice with another seed each time, and ◀ goes back one.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from screenshots import OUT, close_window, open_window, save, settle, wait  # noqa: E402

QUESTION = "Suggest a name for a small bakery by the sea, and say why in one sentence."


def main() -> int:
    from runtime.paths import models_dir

    os.environ["LOKAL_MODELS_DIR"] = str(models_dir())
    scratch = Path(tempfile.mkdtemp(prefix="lokal-shots-"))
    for name in ("LOKAL_DATA_DIR", "LOKAL_CONFIG_DIR", "LOKAL_CACHE_DIR", "LOKAL_LOG_DIR"):  # never the user's own folders
        os.environ[name] = str(scratch / name.lower())
    app, window = open_window("light", "en")
    chat = window.chat
    chat.new_conversation()
    chat.set_settings("", dataclasses.replace(chat.settings(), max_tokens=60, seed=1))
    chat.send(QUESTION)
    wait(app, lambda: not chat.any_generating, 240)
    for seed in (2, 3):
        chat.set_settings("", dataclasses.replace(chat.settings(), seed=seed))
        chat.regenerate()
        wait(app, lambda: not chat.any_generating, 240)
    chat.switch_branch(1, -1)
    settle(app, window)  # the branch's reply laid out at its own height, not the last one's
    bar = window.chat_view.widgets[1].branch_bar
    if bar is None or bar.label.text() != "2/3":
        raise SystemExit(f"expected the second of three replies, the bar says {bar.label.text() if bar else None!r}")
    shots: list[Path] = []
    save(window.grab(), "branches", shots)
    close_window(window)
    print(shots[0].relative_to(OUT.parent.parent))
    return 0


if __name__ == "__main__":
    sys.exit(main())
