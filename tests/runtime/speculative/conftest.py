"""Speculation's own tests run the runtime with `auto` speculating (LOKAL_AUTO_SPECULATION=on)."""

import os

import pytest


@pytest.fixture(scope="module")
def loaded_runtime(starter_model):
    from runtime.client import RuntimeClient
    from runtime.protocol import ModelLoadParams

    env = dict(os.environ, LOKAL_AUTO_SPECULATION="on")
    client = RuntimeClient(env=env)
    client.initialize("pytest")
    client.load_model(ModelLoadParams(path=str(starter_model), n_ctx=2048))
    yield client
    client.close()


@pytest.fixture
def runtime():
    from runtime.client import RuntimeClient

    env = dict(os.environ, LOKAL_AUTO_SPECULATION="on")
    client = RuntimeClient(env=env)
    client.initialize("pytest")
    yield client
    client.close()
