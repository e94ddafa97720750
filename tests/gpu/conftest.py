"""The GPU path on this machine: the Vulkan build on lavapipe (tests/vulkan_helpers.py), built by
scripts/build-vulkan.sh. These tests are collected where LOKAL_VULKAN_PYTHON names that build's Python
(tests/conftest.py); once named, a missing build fails them, as a missing starter model does."""

from __future__ import annotations

import os

import pytest

from vulkan_helpers import start_vulkan_runtime, vulkan_python_path


@pytest.fixture(scope="session")
def vulkan_python() -> str:
    python = vulkan_python_path()
    if not os.access(python, os.X_OK):
        pytest.fail(f"no Vulkan build of llama.cpp at {python}: build it with `bash scripts/build-vulkan.sh` (once, about 20 minutes; it is cached)", pytrace=False)
    return python


@pytest.fixture
def vulkan_runtime(vulkan_python):
    client = start_vulkan_runtime(vulkan_python)
    yield client
    client.close()
