"""bench/paired.py: which way a figure's new/old ratio is a gain."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from paired import higher_is_better  # noqa: E402  (bench/paired.py)


def test_a_rate_is_better_higher_and_a_time_lower_unless_named():
    assert higher_is_better("prompts.1.modes.auto.decode_tokens_per_s", [])
    assert not higher_is_better("openai_api.ttft_ms_median", [])
    assert higher_is_better("openai_api.ttft_ms_median", ["openai_api.ttft_ms_median"])
