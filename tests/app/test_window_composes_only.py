"""app/window.py puts the pieces together and renders their state: the logic lives in the controllers and
the parts it composes, so the file stays small and asks nothing with a nested event loop."""

from __future__ import annotations

from pathlib import Path

WINDOW = Path(__file__).resolve().parents[2] / "app" / "window.py"


def test_the_window_stays_under_400_lines():
    lines = len(WINDOW.read_text(encoding="utf-8").splitlines())
    assert lines < 400, f"app/window.py has {lines} lines: move what is not composing or rendering into its own module"


def test_the_window_writes_no_state_calls_no_runtime_and_runs_no_nested_event_loop():
    source = WINDOW.read_text(encoding="utf-8")
    for what in (".exec(", "QMessageBox", "QFileDialog", "QInputDialog", "set_state(", "get_state(", ".call("):
        assert what not in source, f"app/window.py uses {what}: a controller or a part of the window does that"
