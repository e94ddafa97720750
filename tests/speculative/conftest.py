"""Speculation's own tests run the runtime as users get it: `auto` speculates (the top conftest turns that off elsewhere)."""

import os

import pytest


@pytest.fixture(scope="module")
def loaded_runtime(starter_model):
    from runtime.client import RuntimeClient
    from runtime.protocol import ModelLoadParams

    env = {k: v for k, v in os.environ.items() if k != "LOKAL_AUTO_SPECULATION"}
    client = RuntimeClient(env=env)
    client.initialize("pytest")
    client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=2048))
    yield client
    client.close()


@pytest.fixture
def runtime():
    from runtime.client import RuntimeClient

    env = {k: v for k, v in os.environ.items() if k != "LOKAL_AUTO_SPECULATION"}
    client = RuntimeClient(env=env)
    client.initialize("pytest")
    yield client
    client.close()
