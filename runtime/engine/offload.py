"""How many of a model's layers go to the GPU, and the report of where they went.

`plan_offload` turns ModelLoadParams.n_gpu_layers (None Auto, -1 all, 0 off, N) into a layer count for
this machine: Auto fits the per-layer estimate (memory.layer_costs) into the GPU devices' free memory
less the desktop margin. `load_stepping_down` is the safety net under that estimate: when llama.cpp
still cannot allocate the layers Auto chose, it tries fewer, down to the CPU, and the report says so.
`offload_report` measures what the load used on each device (its free memory before and after) rather
than repeating the estimate.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, Sequence, TypeVar

from runtime.llama import memory
from runtime.llama.devices import forced_budget, gpu_backends, gpu_devices
from runtime.gguf.reader import GGUFHeader
from runtime.protocol import Device, DeviceUse, OffloadReport

log = logging.getLogger("lokal.offload")

AUTO, ALL, OFF = None, -1, 0  # ModelLoadParams.n_gpu_layers

T = TypeVar("T")


@dataclass(frozen=True)
class OffloadPlan:
    requested: int | None
    layers: int  # what llama.cpp is asked for: 0 when no GPU device is there, whatever was requested
    layers_total: int
    reason: str
    needed_bytes: int = 0  # Auto: device bytes for every layer
    budget_bytes: int = 0  # Auto: what they were judged against


def gib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB"


def plan_offload(
    header: GGUFHeader, requested: int | None, n_ctx_total: int, type_k: str, type_v: str, n_batch: int, devices: Sequence[Device], budget: int | None = None
) -> OffloadPlan:
    """The layer count for a load of `n_ctx_total` cells (n_ctx x n_seq); `budget` overrides free memory less the margin."""
    costs = memory.layer_costs(header, n_ctx_total, type_k, type_v, n_batch)
    total = costs.layers_total
    gpus = gpu_devices(list(devices))
    if not gpus:
        backends = gpu_backends()
        reason = "this build runs on the CPU" if not backends else f"no {'/'.join(backends)} device found: every layer runs on the CPU"
        return OffloadPlan(requested, 0, total, reason)
    if requested == OFF:
        return OffloadPlan(requested, 0, total, "GPU offload is off: every layer runs on the CPU")
    if requested is not AUTO:
        layers = total if requested == ALL or requested >= total else requested
        return OffloadPlan(requested, layers, total, f"{layers} of {total} layers, as asked")
    if budget is None:
        budget = forced_budget()
    if budget is None:
        budget = sum(max(0, d.memory_free - memory.desktop_margin(d.memory_total)) for d in gpus)
    needed = costs.device_bytes(total)
    layers = memory.offload_layers(costs, budget)
    if layers == total:
        reason = f"all {total} layers fit: {gib(needed)} of {gib(budget)} free beyond the desktop's margin"
    elif layers:
        reason = f"{layers} of {total} layers fit in the {gib(budget)} free beyond the desktop's margin (all of them need {gib(needed)})"
    else:
        reason = f"not one layer fits in the {gib(budget)} free beyond the desktop's margin: every layer runs on the CPU"
    return OffloadPlan(requested, layers, total, reason, needed, budget)


def load_stepping_down(attempt: Callable[[int], T], layers: int, may_step_down: bool, cancelled: Callable[[], bool] = lambda: False) -> tuple[T, list[int], str]:
    """`attempt(layers)`, and with `may_step_down` (Auto) again with fewer layers each time llama.cpp fails to
    allocate them, down to 0; returns what the attempt returned, the counts that failed, and the last error."""
    failed: list[int] = []
    error = ""
    while True:
        try:
            return attempt(layers), failed, error
        except (ValueError, RuntimeError) as exc:
            if not may_step_down or layers == 0 or cancelled():
                raise
            failed.append(layers)
            error = str(exc)
            fewer = memory.step_down(layers)
            log.warning("llama.cpp could not load %d layers on the GPU (%s): trying %d", layers, error, fewer)
            layers = fewer


def offload_report(plan: OffloadPlan, layers: int, failed: list[int], error: str, before: Sequence[Device], after: Sequence[Device]) -> OffloadReport:
    """What the load did: `layers` on the GPU (after any step-down), split over the devices as llama.cpp splits them,
    with each device's memory measured `before` and `after` the load."""
    gpus_before = gpu_devices(list(before))
    now = {d.id or d.name: d for d in gpu_devices(list(after))}
    uses = []
    for device, count in zip(gpus_before, memory.split_layers(layers, [d.memory_free for d in gpus_before])):
        if count:
            later = now.get(device.id or device.name, device)
            uses.append(DeviceUse(device.name, device.id, count, later.memory_total, later.memory_free, max(0, device.memory_free - later.memory_free)))
    reason = plan.reason
    if failed:
        reason += f"; llama.cpp could not allocate {failed[-1]} layers, so {layers} are on the GPU"
    return OffloadReport(plan.requested, layers, plan.layers_total, uses, reason, plan.needed_bytes, plan.budget_bytes, failed, error)
