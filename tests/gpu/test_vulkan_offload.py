"""The GPU path, run: llama.cpp's Vulkan backend on Mesa's lavapipe (tests/vulkan_helpers.py), with the starter model.

initialize names the device and its memory; Auto puts every layer on it, and a small forced budget a part of
them; the window, on a runtime of the Vulkan build, loads with every layer on the device and its metrics
panel says so. The greedy comparison with the CPU build is bench/offload_check.py's (it measures the agreement).
"""

from __future__ import annotations

import pytest

from runtime.llama import memory
from runtime.gguf.reader import read_file_header
from runtime.protocol import ChatGenerateParams, ChatMessage, ModelLoadParams
from vulkan_helpers import start_vulkan_runtime, vulkan_command

pytestmark = pytest.mark.slow

LAVAPIPE = "llvmpipe"  # Mesa's lavapipe calls its device after the llvmpipe rasterizer it runs on
LOAD = dict(n_ctx=1024, n_seq=1)


def test_initialize_names_the_vulkan_backend_and_the_device_with_its_memory(vulkan_runtime):
    init = vulkan_runtime.initialize("pytest-vulkan")
    assert init.gpu_backends == ["vulkan"] and init.backend == "vulkan"
    (device,) = init.gpu_devices
    assert LAVAPIPE in device.name and device.backend == "Vulkan" and device.id == "Vulkan0"
    assert device.memory_total > 0 and 0 < device.memory_free <= device.memory_total


def test_auto_puts_every_layer_on_the_device_and_a_small_budget_only_some(vulkan_python, starter_model):
    client = start_vulkan_runtime(vulkan_python)
    try:
        result = client.load_model(ModelLoadParams(path=str(starter_model), **LOAD))
        report = result.offload
        assert (report.requested, report.layers, report.layers_total, result.n_gpu_layers) == (None, 31, 31, 31)
        assert "all 31 layers fit" in report.reason and not report.stepped_down_from
        (device,) = report.devices
        assert LAVAPIPE in device.name and device.layers == 31 and device.memory_total > 0
        assert client.metrics().offload == report
    finally:
        client.close()
    costs = memory.layer_costs(read_file_header(starter_model), LOAD["n_ctx"])
    client = start_vulkan_runtime(vulkan_python, LOKAL_OFFLOAD_BUDGET_BYTES=str(costs.device_bytes(10)))
    try:
        report = client.load_model(ModelLoadParams(path=str(starter_model), **LOAD)).offload
        assert (report.layers, report.budget_bytes) == (10, costs.device_bytes(10)) and "10 of 31 layers fit" in report.reason
        assert report.devices[0].layers == 10
        reply = client.chat(ChatGenerateParams("partial", [ChatMessage("user", "Say hello.")], max_tokens=8, temperature=0.0))
        assert reply.stats.completion_tokens > 0  # half on the device, half on the CPU, one reply
    finally:
        client.close()


def test_a_budget_for_every_layer_with_two_sequences_loads_two_sequences_and_every_layer(vulkan_python, starter_model):
    """Four sequences' caches would leave layers on the CPU (runtime/engine/engine.py sequences_that_fit): two load, all layers on the device."""
    n_ctx = 2048
    costs = memory.layer_costs(read_file_header(starter_model), 2 * n_ctx)
    client = start_vulkan_runtime(vulkan_python, LOKAL_OFFLOAD_BUDGET_BYTES=str(costs.device_bytes(31)))
    try:
        result = client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=n_ctx, n_seq=4))
        assert (result.n_seq, result.n_gpu_layers, result.offload.devices[0].layers) == (2, 31, 31)
        reply = client.chat(ChatGenerateParams("two", [ChatMessage("user", "Say hello.")], max_tokens=8, temperature=0.0))
        assert reply.stats.completion_tokens > 0
    finally:
        client.close()


def test_the_window_runs_its_model_on_the_device_untouched_and_the_panel_says_so(qtbot, vulkan_python, starter_model, tmp_path, monkeypatch):
    """The window as a user has it (no load setting touched), on a runtime of the Vulkan build."""
    from app.chat.controller import ConversationSettings
    from app.main import create_main_window
    from vulkan_helpers import vulkan_env
    from window_helpers import wait_loaded, wait_reply

    for name, value in vulkan_env().items():
        monkeypatch.setenv(name, value)
    window = create_main_window(store_path=tmp_path / "conversations.sqlite3", runtime_command=vulkan_command(vulkan_python), autoload=False)
    window.chat.default_settings = ConversationSettings(temperature=0.0, max_tokens=8, n_ctx=1024, seed=1)
    qtbot.addWidget(window)
    window.show()
    try:
        window.load_model(str(starter_model))
        wait_loaded(qtbot, window)
        assert window.session.loaded.offload.layers == 31
        window.chat.send("Say hello.")
        wait_reply(qtbot, window)
        panel = window.metrics_panel
        qtbot.waitUntil(lambda: (panel.value_of("offload") or "").startswith(f"31/31 layers on {LAVAPIPE}"), timeout=10_000)
        device_rows = [key for _section, key, _label in panel._shown if key.startswith("gpu:")]
        assert len(device_rows) == 1 and panel.value_of(device_rows[0]).endswith(" MB") and LAVAPIPE in panel.label_of(device_rows[0])
    finally:
        window.shutdown()
