"""The status bar's state and a passing message never share the same place on screen."""

from __future__ import annotations

from PySide6.QtWidgets import QMainWindow

from app.models.status_line import StatusLine


def test_a_message_said_before_the_window_shows_covers_the_state_instead_of_being_drawn_over_it(qtbot):
    window = QMainWindow()
    qtbot.addWidget(window)
    line = StatusLine(window.statusBar())
    line.state_label.setText("Starting the runtime…")
    window.statusBar().showMessage("Fetching the starter model…")  # as the window's start-up says it, before show()
    window.show()
    qtbot.waitExposed(window)
    assert not line.state_label.isVisible(), "the state is drawn under the message"
    window.statusBar().clearMessage()
    assert line.state_label.isVisible()
    window.statusBar().showMessage("Copied to the clipboard", 2000)
    assert not line.state_label.isVisible()
    qtbot.waitUntil(line.state_label.isVisible, timeout=4_000)  # back once the message times out
