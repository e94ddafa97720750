"""RenderPace: a streaming reply is drawn 20 times a second while that is cheap, less often as drawing it costs more.

A fake clock stands for the GUI thread's CPU time; what the window measures of a real reply is in
bench/window_decode.py.
"""

from __future__ import annotations

import pytest

from app.chat.render_pace import BUDGET, FASTEST_MS, SLOWEST_MS, RenderPace


class Clocks:
    def __init__(self) -> None:
        self.cpu = 0.0  # the GUI thread's CPU time
        self.reading = 0.0  # of which spent reading the runtime's lines

    def pace(self) -> RenderPace:
        return RenderPace(clock=lambda: self.cpu, reading=lambda: self.reading)


def run(clocks: Clocks, pace: RenderPace, work_s: float, reading_s: float = 0.0, flushes: int = 30) -> int:
    interval = pace.tick()
    for _ in range(flushes):
        clocks.cpu += work_s + reading_s
        clocks.reading += reading_s
        interval = pace.tick()
    return interval


def test_a_reply_cheap_to_draw_is_drawn_twenty_times_a_second():
    clocks = Clocks()
    assert run(clocks, clocks.pace(), work_s=0.001) == FASTEST_MS == 50


def test_a_reply_costly_to_draw_is_drawn_less_often_within_the_budget():
    clocks = Clocks()
    work_s = 0.005  # 5 ms a flush: at 50 ms apart that is 10 % of a core
    interval = run(clocks, clocks.pace(), work_s=work_s)
    assert interval == pytest.approx(work_s / BUDGET * 1000, abs=1)
    assert FASTEST_MS < interval < SLOWEST_MS


def test_however_costly_it_still_moves_five_times_a_second():
    clocks = Clocks()
    assert run(clocks, clocks.pace(), work_s=0.5) == SLOWEST_MS == 200


def test_reading_the_runtimes_lines_does_not_slow_the_drawing():
    """That work follows the model's tokens: drawing less often would not save it."""
    clocks = Clocks()
    assert run(clocks, clocks.pace(), work_s=0.001, reading_s=0.02) == FASTEST_MS


def test_one_slow_frame_does_not_halve_the_pace():
    clocks = Clocks()
    pace = clocks.pace()
    run(clocks, pace, work_s=0.001)
    clocks.cpu += 0.02  # one flush that took 20 ms (a code block's first highlight, a swap)
    assert pace.tick() < 2 * FASTEST_MS


def test_the_next_reply_starts_at_the_fastest_pace():
    clocks = Clocks()
    pace = clocks.pace()
    assert run(clocks, pace, work_s=0.5) == SLOWEST_MS
    pace.restart()
    clocks.cpu += 5.0  # whatever the window did between replies is not a flush's cost
    assert pace.tick() == FASTEST_MS
    clocks.cpu += 0.001
    assert pace.tick() == FASTEST_MS


def test_a_clock_that_moves_in_ticks_still_gives_the_true_cost():
    """Windows counts a thread's CPU time in clock ticks of 15.6 ms: a flush reads 0 or a whole tick."""
    clocks = Clocks()
    pace = clocks.pace()
    pace.tick()
    interval = FASTEST_MS
    for i in range(40):  # 20 % of the flushes see a tick: 3.1 ms a flush on average, 62 ms apart at the budget
        clocks.cpu += 0.0156 if i % 5 == 0 else 0.0
        interval = pace.tick()
    assert FASTEST_MS < interval < SLOWEST_MS

