"""bench/verify_costs.py --sizes: the pass sizes a fine cost curve times."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from verify_costs import parse_sizes  # noqa: E402  (bench/verify_costs.py)


def test_sizes_are_ranges_and_single_sizes_and_the_plain_step_is_always_timed():
    assert parse_sizes("15-17,32") == [1, 15, 16, 17, 32]  # every cost is counted in plain steps: size 1 is timed too
    assert parse_sizes("1-4, 3") == [1, 2, 3, 4]


def test_a_size_below_one_token_is_refused():
    with pytest.raises(argparse.ArgumentTypeError):
        parse_sizes("0-3")
