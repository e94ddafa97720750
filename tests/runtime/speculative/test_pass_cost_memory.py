"""Pass costs kept from one load to the next: the first reply of a load prices its drafts as the last load's did."""

from __future__ import annotations

import json
import logging
import os
import stat
import time
from pathlib import Path

import pytest

from runtime.speculative.costs import CostModel
from runtime.speculative.pass_cost_memory import PassCostMemory


def test_a_remembered_band_prices_passes_until_this_load_measures_it():
    costs = CostModel()
    costs.observe_pass(1, 0.1)
    costs.observe_pass(2, 0.15)  # what calibration measures: a 2-token pass at 0.5 of a step per extra token
    blind = costs.target_cost(10)
    assert not costs.measured(10)
    costs.remember({8: (10.0, 1.0)})  # an earlier load found passes of 8-15 tokens cost a step per token
    assert costs.measured(10)
    assert costs.target_cost(10) == pytest.approx(0.1 * (1 + 1.0 * 9)) and costs.target_cost(10) > blind
    assert costs.slopes[2][1] == pytest.approx(0.5), "a band this load measured stands"
    for _ in range(3):
        costs.observe_pass(10, 0.1 * (1 + 0.6 * 9))  # this load measures the band: its own figure wins
    assert abs(costs.slope_at(10) - 0.6) < 1e-9
    costs.observe_pass(1, 0.1)
    assert abs(costs.slope_at(10) - 0.6) < 1e-9


def test_pass_costs_are_kept_and_recalled_and_a_damaged_file_is_measured_afresh(tmp_path, caplog):
    memory = PassCostMemory(tmp_path / "pass_costs" / "model.json")
    assert memory.recall() == {}
    memory.keep({2: (2.0, 0.52), 8: (10.0, 1.18)})
    assert PassCostMemory(memory.path).recall() == {2: (2.0, 0.52), 8: (10.0, 1.18)}
    memory.path.write_text('{"slopes": {"8": "ten"')
    with caplog.at_level(logging.WARNING, logger="lokal.speculative"):
        assert memory.recall() == {}
    assert "cannot be read" in caplog.text


def test_a_load_remembers_what_the_last_load_of_the_same_model_and_settings_measured(starter_model, tmp_path):
    from runtime.speculative.session import Speculation
    from spec_helpers import chat_prompt, load, run

    target = load(starter_model)
    try:
        memory = PassCostMemory.for_load(target)
        assert memory.path == PassCostMemory.for_load(target).path
        first = Speculation(target, memory=memory)
        prompt = chat_prompt(target, "Write the numbers from one to forty, one per line. " * 6)
        run(target, prompt, first.steppers_for("lookup"), max_tokens=4)  # the prompt in one chunk: a pass calibration never times
        assert first.costs.measured(len(prompt))
        first.close()
        target.clear()
        again = Speculation(target, memory=PassCostMemory.for_load(target))
        assert again.costs.measured(len(prompt)), f"bands remembered: {sorted(again.costs.slopes)}"
        blind = Speculation(target)
        assert not blind.costs.measured(len(prompt))
        again.close()
        blind.close()
    finally:
        target.close()


def test_the_runtime_keeps_the_pass_costs_of_a_model_it_unloads_in_a_private_file(runtime, starter_model):
    from runtime.protocol import ModelLoadParams, methods

    directory = Path(os.environ["LOKAL_CACHE_DIR"]) / "pass_costs"
    started = time.time()
    runtime.load_model(ModelLoadParams(path=str(starter_model), n_ctx=512, n_threads=1))
    runtime.request(methods.MODEL_UNLOAD)
    written = [p for p in directory.glob("*.json") if p.stat().st_mtime >= started - 1]
    assert written, f"nothing kept in {directory}: {list(directory.iterdir()) if directory.exists() else 'no folder'}"
    slopes = json.loads(written[0].read_text())["slopes"]
    assert "2" in slopes, f"the calibration's 2-token pass is among what is kept: {slopes}"
    if os.name == "posix":
        assert stat.S_IMODE(written[0].stat().st_mode) == 0o600
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
