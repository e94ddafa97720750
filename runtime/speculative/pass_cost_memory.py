"""What target passes of each size cost here, kept from one load of a model to the next.

The cost model (costs.py) learns a pass size's price only by paying for one: at
load a short calibration times a step and a 2-token pass, and a draft of an
untimed size is tried only when it is nearly sure to hold. So every load began
blind above 2 tokens, and its first reply paid to find out: with one thread a
pass of 4 to 16 tokens costs about a step per token, twice what the 2-token pass
suggests, and the first code edit of a run lost to plain decoding on drafts of 9
and 36 tokens broken early (bench/lookup_replay.py: tokens per step of cost over
the ten code edits, one-thread curve, geomean 1.037 against the peer's best rule
blind, 1.098 knowing every size). What a pass costs relative to a step belongs to
the machine, the model and its load settings; it is written when the model is
unloaded and read at the next load with the same ones, and each band measured
again replaces what was remembered (costs.CostModel.remember).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
from pathlib import Path

from runtime import paths
from runtime.llama.llama_model import LlamaModel

log = logging.getLogger("lokal.speculative")

FORMAT = 1


class PassCostMemory:
    def __init__(self, path: Path):
        self.path = path

    @classmethod
    def for_load(cls, model: LlamaModel) -> "PassCostMemory":
        """The memory of this model file (by name and size) under its load settings (threads, offload, flash attention...);
        the context's size aside, which changes what the cache holds, not what a pass over it costs."""
        settings = dataclasses.asdict(model.settings)
        path, _ = settings.pop("path"), settings.pop("n_ctx")
        identity = {"model": os.path.basename(path), "size": os.path.getsize(path), "flash_attn_chosen": model.flash_attn, "format": FORMAT, **settings}
        digest = hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()[:24]
        return cls(paths.cache_dir() / "pass_costs" / f"{digest}.json")

    def recall(self) -> dict[int, tuple[float, float]]:
        """band -> (median pass size, slope) as last kept; nothing if none was, or it cannot be read."""
        try:
            kept = json.loads(self.path.read_text())
            return {int(band): (float(n), float(slope)) for band, (n, slope) in kept["slopes"].items()}
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("pass costs kept in %s cannot be read (%s): measured afresh", self.path, exc)
            return {}

    def keep(self, slopes: dict[int, tuple[float, float]]) -> None:
        if not slopes:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps({"slopes": {str(band): [n, slope] for band, (n, slope) in slopes.items()}}))
            os.replace(tmp, self.path)
        except OSError as exc:
            log.warning("pass costs could not be kept in %s: %s", self.path, exc)
