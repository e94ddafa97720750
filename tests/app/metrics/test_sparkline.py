"""The metrics panel's decode-speed sparkline, drawn against the clock: a real widget, offscreen, with a clock the test sets."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QPalette

from app.metrics.sparkline import GAP_S, WINDOW_S, Sparkline, stretches

WIDTH, HEIGHT = 301, 56


class Clock:
    def __init__(self, now: float = 1000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def sparkline(qtbot, clock):
    widget = Sparkline(clock=clock)
    qtbot.addWidget(widget)
    widget.resize(WIDTH, HEIGHT)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def decode(sparkline: Sparkline, clock: Clock, seconds: float, speed: float = 40.0) -> None:
    """A reply streaming for `seconds`, sampled four times a second as the poller does."""
    for _ in range(int(seconds * 4)):
        clock.now += 0.25
        sparkline.add(speed)


def accent_columns(sparkline: Sparkline) -> set[int]:
    """The x of each column where the line (the palette's accent) is drawn."""
    image = sparkline.grab().toImage()
    accent = sparkline.palette().color(QPalette.ColorRole.Highlight)
    columns = set()
    for x in range(image.width()):
        for y in range(image.height()):
            pixel = QColor(image.pixel(x, y))
            if abs(pixel.red() - accent.red()) + abs(pixel.green() - accent.green()) + abs(pixel.blue() - accent.blue()) < 60:
                columns.add(x)
                break
    return columns


def test_samples_are_cut_into_stretches_where_no_reply_was_decoding():
    samples = [(0.0, 1.0), (0.25, 2.0), (0.5, 3.0), (0.5 + GAP_S + 0.01, 4.0), (0.75 + GAP_S, 5.0)]
    assert stretches(samples) == [samples[:3], samples[3:]]
    assert stretches([]) == []


def test_a_reply_of_half_a_minute_ago_is_drawn_half_the_chart_from_now(sparkline, clock):
    decode(sparkline, clock, 2.0)
    rect = QRectF(0, 0, 300, 50)
    assert sparkline.lines(rect, clock.now)[0][-1].x() == pytest.approx(rect.right())
    clock.now += WINDOW_S / 2
    assert sparkline.lines(rect, clock.now)[0][-1].x() == pytest.approx(rect.right() - rect.width() / 2)
    # The picture too: the line has left the right edge and sits near the middle.
    drawn = accent_columns(sparkline)
    assert drawn and max(drawn) < WIDTH * 0.6 and min(drawn) > WIDTH * 0.4, sorted(drawn)


def test_two_replies_with_a_pause_between_are_two_lines_with_nothing_across_the_pause(sparkline, clock):
    decode(sparkline, clock, 3.0)
    clock.now += 20.0
    decode(sparkline, clock, 3.0)
    lines = sparkline.lines(QRectF(0, 0, 300, 50), clock.now)
    assert [len(points) for points in lines] == [12, 12]
    drawn = accent_columns(sparkline)
    pause = range(int(WIDTH * (1 - 21 / WINDOW_S)), int(WIDTH * (1 - 5 / WINDOW_S)))  # well inside the 20 s pause
    assert drawn, "nothing was drawn"
    assert not drawn.intersection(pause), f"a line is drawn across the pause, at x {sorted(drawn.intersection(pause))}"


def test_a_reply_of_one_sample_is_drawn_as_a_dot(sparkline, clock):
    sparkline.add(30.0)
    clock.now += 10.0
    drawn = accent_columns(sparkline)
    assert drawn and all(abs(x - WIDTH * (1 - 10 / WINDOW_S)) < 5 for x in drawn), sorted(drawn)


def test_the_line_moves_while_shown_and_stops_once_its_samples_are_older_than_the_window(qtbot, sparkline, clock):
    assert not sparkline.moving, "nothing to move before the first sample"
    decode(sparkline, clock, 1.0)
    assert sparkline.moving
    sparkline.hide()
    assert not sparkline.moving, "a hidden chart need not be repainted"
    sparkline.show()
    assert sparkline.moving
    clock.now += WINDOW_S + 1
    qtbot.waitUntil(lambda: not sparkline.moving, timeout=3_000)
    assert not sparkline.samples
    assert not accent_columns(sparkline)
