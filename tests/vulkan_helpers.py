"""Runtimes on the Vulkan build of llama.cpp (.cache/vulkan-venv, built by scripts/dev.sh test), on Mesa's lavapipe:
a Vulkan device that runs on the CPU, so the GPU path runs on machines without a GPU. The tests themselves run in
the CPU .venv; only the runtime process they start uses the Vulkan build."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VULKAN_PYTHON_ENV = "LOKAL_VULKAN_PYTHON"


def vulkan_python_path() -> str:
    return os.environ.get(VULKAN_PYTHON_ENV) or str(ROOT / ".cache" / "vulkan-venv" / "bin" / "python")


# On lavapipe (Mesa 22.3, Debian 12), speculation killed the runtime: after a few verification passes (several tokens
# of one sequence, logits for all of them), lavapipe's queue thread died (SIGSEGV) releasing a buffer whose memory had
# been overwritten, during a later pass. With ggml-vulkan's op fusion off (its own switch: multi-add, rms_norm+mul,
# rope+set_rows, ... then run as separate shaders) it never did, with the same passes: the fault is in a fused shader
# or in lavapipe running it, not in Lokal (no Mesa debug symbols here to say which). Whether GPU drivers (RADV, ANV)
# are hit too is untried: the runtime leaves fusion on; the tests, on lavapipe, turn it off.
LAVAPIPE_WORKAROUND = {"GGML_VK_DISABLE_FUSION": "1"}


def vulkan_env(**extra: str) -> dict:
    """This tree's code, and lavapipe as Vulkan device 0 (llama.cpp skips CPU-type Vulkan devices unless named)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), GGML_VK_VISIBLE_DEVICES="0", **LAVAPIPE_WORKAROUND)
    env.update(extra)
    return env


def vulkan_command(python: str) -> list[str]:
    return [python, "-m", "runtime"]


def start_vulkan_runtime(python: str, **env: str):
    from runtime.client import RuntimeClient

    client = RuntimeClient(command=vulkan_command(python), env=vulkan_env(**env))
    client.initialize("pytest-vulkan")
    return client
