"""Hostile GGUF headers: each is refused with a GGUFError that says what is wrong, from the reader itself,
from model.load in the real runtime (which keeps serving), and from hub.quants over the loopback hub.

A header is read from any repository the user merely opens in the model browser and from any file
offered to model.load, so a few hundred crafted bytes must not make the reader (or what the app
computes from its numbers) allocate gigabytes, loop for minutes or crash with another exception.
"""

from __future__ import annotations

import io
import math
import os
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from bad_input import expect_error
from fake_hub import FakeFile, FakeHub, FakeRepo
from gguf_files import (
    STRING, UINT32, UINT64, UINT8, array_claiming, entry, llama_claiming, nested_arrays, raw_header, tokenizer_metadata,
    typed, write_llama, TINY_VOCABULARY,
)
from runtime.llama.memory import estimate_load
from runtime.gguf.reader import GGUFError, read_header
from runtime.hub import fit
from runtime.protocol import ErrorCode, HubQuantsParams, RpcError
from sample_repos import hub_env

FLOAT64 = 12
LLAMA = entry("general.architecture", typed(STRING, "llama"))

# name -> (the file's bytes, what the error must name)
HOSTILE = {
    "ten million layers": (llama_claiming(10**7), "block_count = 10000000"),
    "four billion layers": (llama_claiming(4 * 10**9), "block_count = 4000000000"),
    "2^63 layers as uint64": (llama_claiming(2**63, UINT64), "block_count"),
    "5,000 nested arrays": (raw_header(LLAMA, entry("general.tags", nested_arrays(5000))), "nested"),
    "alignment 0": (raw_header(LLAMA, entry("general.alignment", typed(UINT32, 0))), "general.alignment = 0"),
    "alignment 0.5": (raw_header(LLAMA, entry("general.alignment", typed(FLOAT64, 0.5))), "general.alignment = 0.5"),
    "alignment a string": (raw_header(LLAMA, entry("general.alignment", typed(STRING, "x"))), "general.alignment = 'x'"),
    "context length NaN": (raw_header(LLAMA, entry("llama.context_length", typed(FLOAT64, math.nan))), "llama.context_length = nan"),
    "an array of ten million uint64 in 100 bytes": (raw_header(LLAMA, entry("tokenizer.ggml.scores", array_claiming(UINT64, 10**7))), "needs at least 80,000,000 bytes"),
    "a million metadata entries in 100 bytes": (raw_header(LLAMA, n_kv=10**6), "metadata count"),
    "a million tensors in 100 bytes": (raw_header(LLAMA, n_tensors=10**6), "tensor count"),
    "a vocabulary of ten million tokens in 100 bytes": (raw_header(LLAMA, entry("tokenizer.ggml.tokens", array_claiming(STRING, 10**7))), "needs at least 80,000,000 bytes"),
    "a token claiming 2^40 bytes": (raw_header(LLAMA, entry("tokenizer.ggml.tokens", array_claiming(STRING, 2) + struct.pack("<QQ", 2**40, 0))), "implausible string length 1099511627776"),
    "a token longer than the file": (raw_header(LLAMA, entry("tokenizer.ggml.tokens", array_claiming(STRING, 2) + struct.pack("<QQ", 10**6, 0) + b"abc")), "a string"),
    "a per-layer array of 100,000 head counts": (raw_header(LLAMA, entry("llama.attention.head_count_kv", array_claiming(UINT32, 100_000) + b"\0" * 400_000)), "at most 512"),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_the_reader_refuses_a_hostile_header(name):
    data, match = HOSTILE[name]
    with pytest.raises(GGUFError, match=match):
        read_header(io.BytesIO(data), len(data))


@pytest.fixture(scope="module")
def hostile_files(tmp_path_factory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("hostile-gguf")
    paths = {}
    for i, (name, (data, _)) in enumerate(HOSTILE.items()):
        path = folder / f"hostile-{i}.gguf"
        path.write_bytes(data)
        paths[name] = str(path)
    return paths


@pytest.fixture(scope="module")
def serving_runtime():
    from runtime.client import RuntimeClient

    client = RuntimeClient()
    client.initialize("pytest-hostile-gguf")
    yield client
    client.close()


@pytest.mark.slow
@pytest.mark.parametrize("name", HOSTILE)
def test_model_load_refuses_a_hostile_file_and_keeps_serving(serving_runtime, hostile_files, name):
    error = expect_error(serving_runtime, "model.load", {"path": hostile_files[name], "n_ctx": 512}, ErrorCode.INVALID_MODEL, HOSTILE[name][1])
    assert "is not a usable GGUF model" in error.message


@pytest.fixture(scope="module")
def hostile_hub(tmp_path_factory):
    """A loopback hub with one repository per hostile header, and a runtime process pointed at it."""
    from runtime.client import RuntimeClient

    repos = {f"evil/{i}-GGUF": FakeRepo(files={f"model-{i}-Q4_K_M.gguf": FakeFile(data=data)}) for i, (data, _) in enumerate(HOSTILE.values())}
    with FakeHub(repos) as server:
        env = {**os.environ, **hub_env(server, tmp_path_factory.mktemp("hostile-hub"))}
        env.pop("HF_TOKEN", None)
        client = RuntimeClient(env=env)
        client.initialize("pytest-hostile-hub")
        yield client
        client.close()


@pytest.mark.slow
@pytest.mark.parametrize("name", HOSTILE)
def test_hub_quants_refuses_a_hostile_remote_header_and_keeps_serving(hostile_hub, name):
    i = list(HOSTILE).index(name)
    error = expect_error(hostile_hub, "hub.quants", {"repo": f"evil/{i}-GGUF"}, ErrorCode.INVALID_MODEL, HOSTILE[name][1])
    assert "is not a usable GGUF file" in error.message


# ---- fuzzed: every input parses or raises GGUFError, and a header that parses can be used -----------------


def _plausible_header() -> bytes:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        path = write_llama(Path(folder) / "m.gguf", name="Fuzz", block_count=4, embedding=128, tokenizer=tokenizer_metadata(TINY_VOCABULARY[:20]))
        header = read_header(io.BytesIO(path.read_bytes()))
        return path.read_bytes()[: header.header_size]


PLAUSIBLE = _plausible_header()
EXTREMES = [0, 1, 2**31 - 1, 2**31, 2**32 - 1, 2**63, 2**64 - 1]


def _usable_or_refused(data: bytes, size: int | None) -> None:
    try:
        header = read_header(io.BytesIO(data), size)
    except GGUFError:
        return
    # What the catalog and model.load compute from a header must not fail either.
    fit.summarize(header)
    estimate_load(header, 4096, "q8_0", "f16")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hs.binary(max_size=512), hs.booleans())
def test_random_bytes_parse_or_raise_gguf_error(data, with_size):
    _usable_or_refused(b"GGUF" + struct.pack("<I", 3) + data, len(data) + 8 if with_size else None)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    hs.lists(hs.tuples(hs.integers(0, len(PLAUSIBLE) - 1), hs.integers(0, 255)), max_size=8),
    hs.lists(hs.tuples(hs.integers(0, len(PLAUSIBLE) - 8), hs.sampled_from(EXTREMES), hs.sampled_from(["<I", "<Q"])), max_size=3),
    hs.integers(0, len(PLAUSIBLE)),
)
def test_mutated_headers_parse_or_raise_gguf_error(flips, numbers, cut):
    """A real header with bytes changed, numbers set to extremes (counts, lengths, types, layers) and cut short."""
    data = bytearray(PLAUSIBLE)
    for at, value in flips:
        data[at] = value
    for at, value, fmt in numbers:
        packed = struct.pack(fmt, value % (2 ** (8 * struct.calcsize(fmt))))
        data[at : at + len(packed)] = packed
    data = bytes(data[: max(cut, 24)])
    _usable_or_refused(data, len(data))
