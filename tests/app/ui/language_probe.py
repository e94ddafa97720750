"""Run by tests/app/ui/test_translations.py in a process of its own (the OS locale is read once per process):
open the real window offscreen, print what it shows as JSON, optionally choose a language in View ▸ Language.

    python tests/app/ui/language_probe.py DATA_DIR [CHOICE [SCREENSHOT]]
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main() -> int:
    from PySide6.QtWidgets import QApplication, QMessageBox

    from app.main import create_main_window
    from app.ui import language

    data = Path(sys.argv[1])
    choice = sys.argv[2] if len(sys.argv) > 2 else None
    app = QApplication.instance() or QApplication([])
    window = create_main_window(store_path=data / "conversations.sqlite3", autoload=False)
    window.show()
    app.processEvents()
    shown = {
        "language": language.current(),
        "menus": [action.text() for action in window.menuBar().actions()],
        "placeholder": window.composer.edit.placeholderText(),
        "file_menu": [a.text() for a in window.menuBar().actions()[0].menu().actions() if not a.isSeparator()],
        "languages": {code: action.text() for code, action in window.language.actions.items()},
        "checked": next(code for code, action in window.language.actions.items() if action.isChecked()),
    }
    if choice is not None:
        window.language.choose(choice)
        box = window.language.question
        shown["question"] = box.text() if box is not None else None
        if box is not None:
            later = next(b for b in box.buttons() if box.buttonRole(b) == QMessageBox.ButtonRole.RejectRole)
            later.click()
    if len(sys.argv) > 3:
        window.resize(1100, 700)
        app.processEvents()
        window.grab().save(sys.argv[3])
    window.shutdown()
    print(json.dumps(shown, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
