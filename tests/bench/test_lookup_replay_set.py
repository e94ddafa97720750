"""bench/lookup_replay.py --set: one of the drafting's numbers changed for a replay, refused with a reason when it is not one."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from lookup_replay import drafting_constant  # noqa: E402

from runtime.speculative import adaptive, copy_runs  # noqa: E402


def test_a_drafting_number_is_named_by_its_module_and_keeps_its_type():
    assert drafting_constant("adaptive.MATCH_FACTOR=3") == (adaptive, "MATCH_FACTOR", 3)
    module, name, value = drafting_constant("copy_runs.PRIOR_TOKENS=2")
    assert (module, name, value) == (copy_runs, "PRIOR_TOKENS", 2.0) and isinstance(value, float)


@pytest.mark.parametrize(
    "setting, why",
    [
        ("adaptive.MATCH_FACTOR", "not MODULE.NAME=VALUE"),
        ("MATCH_FACTOR=3", "not MODULE.NAME=VALUE"),
        ("nowhere.MATCH_FACTOR=3", "no module 'nowhere'"),
        ("adaptive.NOT_THERE=3", "not a number the module defines"),
        ("adaptive.Controller=3", "not a number the module defines"),
        ("adaptive.MATCH_FACTOR=2.5", "not a whole number"),
    ],
)
def test_what_is_not_a_drafting_number_is_refused_with_the_reason(setting, why):
    with pytest.raises(ValueError, match=why):
        drafting_constant(setting)
