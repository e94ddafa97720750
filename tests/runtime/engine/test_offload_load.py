"""GPU offload through the real runtime process with the starter model, on this machine's CPU build of
llama.cpp (.venv): initialize says the build runs on the CPU, Auto (the default) loads every layer on the
CPU and the result, the metrics and a bad choice say so plainly. tests/gpu/ runs the same path on a GPU."""

from __future__ import annotations

import pytest

from runtime.client import RuntimeClient
from runtime.protocol import ErrorCode, ModelLoadParams, RpcError

pytestmark = pytest.mark.slow


def test_a_cpu_build_says_so_and_auto_puts_every_layer_on_the_cpu(starter_model):
    with RuntimeClient() as client:
        init = client.initialize("pytest-offload")
        assert init.gpu_backends == [] and init.gpu_devices == [] and init.backend == "cpu"
        (cpu,) = init.devices
        assert cpu.type == "cpu" and cpu.backend == "CPU" and cpu.memory_total > 0
        assert ModelLoadParams(path="x").n_gpu_layers is None  # Auto unless asked otherwise
        result = client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=512, n_seq=1))
        report = result.offload
        assert (report.requested, report.layers, report.layers_total, result.n_gpu_layers) == (None, 0, 31, 0)
        assert report.reason == "this build runs on the CPU" and report.devices == [] and not report.stepped_down_from
        assert client.metrics().offload == report
        # "All" on a build without a GPU backend loads on the CPU too, and says why.
        every = client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=512, n_seq=1, n_gpu_layers=-1)).offload
        assert (every.requested, every.layers, every.reason) == (-1, 0, "this build runs on the CPU")
        with pytest.raises(RpcError) as bad:
            client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=512, n_gpu_layers=-2))
        assert bad.value.code == ErrorCode.INVALID_PARAMS and "params.n_gpu_layers" in bad.value.message
        assert client.metrics().offload == every  # the loaded model stays as it was
