"""The window. A minimal placeholder until the desktop-app issue lands."""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    from PySide6.QtWidgets import QApplication, QLabel

    app = QApplication(sys.argv[:1] + argv)
    label = QLabel("Lokal")
    label.resize(640, 480)
    label.show()
    return app.exec()
