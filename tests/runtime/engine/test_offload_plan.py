"""Auto GPU offload as pure decisions (runtime/llama/memory.py, runtime/engine/offload.py): per-layer costs from the GGUF
tensor table, the layer count for a memory budget, how llama.cpp splits layers over devices, and the
step-down when llama.cpp still cannot allocate what Auto chose."""

from __future__ import annotations

import dataclasses

import pytest

from runtime.llama import memory
from runtime.engine.engine import sequences_that_fit
from runtime.engine.offload import load_stepping_down, offload_report, plan_offload
from runtime.gguf.reader import read_file_header
from runtime.protocol import Device, ModelLoadParams

COSTS = memory.LayerCosts(blocks=(10, 20, 30), output=5, compute=100)
GIB = 2**30


def test_device_bytes_count_the_output_layer_first_then_blocks_from_the_last_as_llama_cpp_offloads_them():
    assert COSTS.layers_total == 4
    assert [COSTS.device_bytes(n) for n in range(5)] == [0, 105, 135, 155, 165]
    assert COSTS.device_bytes(-1) == 0 and COSTS.device_bytes(99) == 165


@pytest.mark.parametrize(("budget", "layers"), [(0, 0), (104, 0), (105, 1), (134, 1), (135, 2), (164, 3), (165, 4), (10**12, 4)])
def test_auto_takes_the_most_layers_whose_bytes_fit_the_budget(budget, layers):
    assert memory.offload_layers(COSTS, budget) == layers


def test_the_starter_models_costs_add_up_to_its_tensors_and_kv_cache(starter_model):
    header = read_file_header(starter_model)
    n_ctx = 2048
    costs = memory.layer_costs(header, n_ctx)
    assert costs.layers_total == header.n_layers + 1 == 31  # SmolLM2-135M: 30 blocks and the output layer
    kv = header.kv_bytes_per_token() * n_ctx
    embeddings = sum(t.n_bytes for t in header.tensors if t.name == "token_embd.weight")
    # Its output matrix is tied to the embeddings: the output layer carries a copy, the input stays on the CPU.
    assert not any(t.name == "output.weight" for t in header.tensors)
    assert sum(costs.blocks) + costs.output == header.tensor_bytes + kv
    assert costs.output > embeddings
    assert costs.compute == memory.estimate_load(header, n_ctx).compute
    # Every block of this model is alike: the same weights and the same share of the cache.
    assert len(set(costs.blocks)) == 1


def gpu(free: int, total: int = 8 * GIB, name: str = "GPU0") -> Device:
    return Device(name=name, type="gpu", memory_total=total, memory_free=free, backend="Test", id=name)


def test_auto_keeps_the_desktop_margin_free_and_explicit_choices_are_taken_as_given(starter_model):
    header = read_file_header(starter_model)
    costs = memory.layer_costs(header, 4096)
    margin = memory.desktop_margin(8 * GIB)
    plenty = plan_offload(header, None, 4096, "f16", "f16", 512, [Device("CPU", "cpu", 0, 0), gpu(4 * GIB)])
    assert plenty.layers == 31 and plenty.needed_bytes == costs.device_bytes(31) and plenty.budget_bytes == 4 * GIB - margin
    assert "all 31 layers fit" in plenty.reason
    ten = plan_offload(header, None, 4096, "f16", "f16", 512, [gpu(margin + costs.device_bytes(10))])
    assert ten.layers == 10 and "10 of 31 layers fit" in ten.reason
    assert plan_offload(header, None, 4096, "f16", "f16", 512, [gpu(margin + costs.device_bytes(10) - 1)]).layers == 9
    assert plan_offload(header, None, 4096, "f16", "f16", 512, [gpu(margin)]).layers == 0
    # A forced budget (LOKAL_OFFLOAD_BUDGET_BYTES in tests) replaces free memory less the margin.
    assert plan_offload(header, None, 4096, "f16", "f16", 512, [gpu(4 * GIB)], budget=costs.device_bytes(3)).layers == 3
    # All, off and a number are the user's: not judged against free memory (the fit check does that).
    assert plan_offload(header, -1, 4096, "f16", "f16", 512, [gpu(0)]).layers == 31
    assert plan_offload(header, 0, 4096, "f16", "f16", 512, [gpu(4 * GIB)]).layers == 0
    assert plan_offload(header, 12, 4096, "f16", "f16", 512, [gpu(4 * GIB)]).layers == 12
    assert plan_offload(header, 99, 4096, "f16", "f16", 512, [gpu(4 * GIB)]).layers == 31


def test_without_a_gpu_device_every_choice_runs_on_the_cpu_and_says_why(starter_model):
    """This test process's llama.cpp is the CPU build (.venv): it has no GPU backend."""
    header = read_file_header(starter_model)
    for requested in (None, -1, 5):
        plan = plan_offload(header, requested, 4096, "f16", "f16", 512, [Device("CPU", "cpu", 16 * GIB, 8 * GIB)])
        assert plan.layers == 0 and plan.reason == "this build runs on the CPU"


def test_layers_split_over_devices_in_proportion_to_their_free_memory_as_llama_cpp_splits_them():
    assert memory.split_layers(31, [GIB]) == [31]
    assert memory.split_layers(31, [GIB, GIB]) == [16, 15]
    assert memory.split_layers(31, [3 * GIB, GIB]) == [24, 7]
    assert memory.split_layers(0, [GIB, GIB]) == [0, 0]
    assert memory.split_layers(5, []) == []


def test_auto_steps_down_until_llama_cpp_can_allocate_and_reports_each_count_that_failed():
    def attempt(layers: int) -> int:
        if layers > 12:
            raise ValueError(f"failed to allocate buffer for {layers} layers")
        return layers

    loaded, failed, error = load_stepping_down(attempt, 31, may_step_down=True)
    assert (loaded, failed) == (11, [31, 24, 18, 14]) and error == "failed to allocate buffer for 14 layers"
    assert all(a > b for a, b in zip(failed, failed[1:] + [loaded]))
    with pytest.raises(ValueError):  # a count the user chose is not changed behind their back
        load_stepping_down(attempt, 31, may_step_down=False)
    with pytest.raises(ValueError):  # a cancelled load fails too: its progress callback said stop
        load_stepping_down(attempt, 31, may_step_down=True, cancelled=lambda: True)
    down = [31]
    while down[-1]:
        down.append(memory.step_down(down[-1]))
    assert down[-1] == 0 and len(down) < 20


def test_the_report_measures_each_devices_memory_and_says_when_it_stepped_down(starter_model):
    header = read_file_header(starter_model)
    plan = plan_offload(header, None, 4096, "f16", "f16", 512, [gpu(4 * GIB)])
    before, after = [gpu(4 * GIB)], [gpu(3 * GIB)]
    report = offload_report(plan, 24, [31], "out of device memory", before, after)
    assert (report.layers, report.layers_total, report.stepped_down_from) == (24, 31, [31])
    (device,) = report.devices
    assert (device.name, device.layers, device.memory_used, device.memory_free) == ("GPU0", 24, GIB, 3 * GIB)
    assert "could not allocate 31 layers, so 24 are on the GPU" in report.reason
    assert offload_report(plan, 0, [], "", before, before).devices == []


def test_parallel_sequences_never_cost_the_gpu_a_layer(starter_model):
    """Each sequence's cache sits beside its layers on the GPU. Auto planned four sequences' caches first and moved
    layers to the CPU to make room, which slows every reply; now it takes fewer sequences instead."""
    header = read_file_header(starter_model)
    n_ctx, margin = 4096, memory.desktop_margin(8 * GIB)
    every_layer_with_two = [gpu(margin + memory.layer_costs(header, 2 * n_ctx).device_bytes(31))]
    assert plan_offload(header, None, 4 * n_ctx, "f16", "f16", 512, every_layer_with_two).layers < 31  # four would cost layers
    params = ModelLoadParams(path=str(starter_model), n_ctx=n_ctx, n_seq=4)  # n_gpu_layers: Auto
    n_seq, plan = sequences_that_fit(header, params, 512, every_layer_with_two)
    assert (n_seq, plan.layers) == (2, 31)
    # Where even one sequence leaves layers on the CPU, one sequence it is: a second would cost a layer more.
    ten_layers_with_one = [gpu(margin + memory.layer_costs(header, n_ctx).device_bytes(10))]
    assert sequences_that_fit(header, params, 512, ten_layers_with_one)[0] == 1
    assert sequences_that_fit(header, params, 512, ten_layers_with_one)[1].layers == 10
    # Layers asked for by number, or a machine with no GPU: the sequences asked for, as memory allows.
    assert sequences_that_fit(header, dataclasses.replace(params, n_gpu_layers=10), 512, ten_layers_with_one)[0] == 4
    assert sequences_that_fit(header, params, 512, [Device("CPU", "cpu", 0, 0)])[0] == 4
