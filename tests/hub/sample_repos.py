"""The repositories the loopback hub serves in tests: real GGUF files under hub-like names."""

from __future__ import annotations

from pathlib import Path

from fake_hub import FakeFile, FakeHub, FakeRepo

SMOL_REPO = "lokal-test/SmolLM2-135M-Instruct-GGUF"
SMOL_FILE = "SmolLM2-135M-Instruct-Q4_1.gguf"
GATED_REPO = "lokal-test/gated-GGUF"
QWEN_REPO = "lokal-test/Qwen2.5-Coder-1.5B-Instruct-GGUF"
QWEN_DRAFT_REPO = "lokal-test/Qwen2.5-Coder-0.5B-Instruct-GGUF"


def make_repos(starter: Path, giant: Path) -> dict[str, FakeRepo]:
    from runtime.models import wheels

    size = starter.stat().st_size
    half = size // 2
    qwen_small = wheels.path_of(wheels.QWEN_CODER_0_5B)
    qwen_big = wheels.path_of(wheels.QWEN_CODER_1_5B)
    repos = {
        SMOL_REPO: FakeRepo(
            files={
                SMOL_FILE: FakeFile(source=starter),
                # Shards cut from the same bytes: enough to test grouping and multi-file downloads.
                "SmolLM2-135M-Instruct-Q8_0-00001-of-00002.gguf": FakeFile(source=starter, offset=0, length=half),
                "SmolLM2-135M-Instruct-Q8_0-00002-of-00002.gguf": FakeFile(source=starter, offset=half, length=size - half),
                "SmolLM2-135M-Instruct-F32.gguf": FakeFile(source=giant, _sha256="f" * 64),  # sparse 400 GB: never hashed, never downloaded
                "README.md": FakeFile(data=b"# SmolLM2 135M for tests\n", lfs=False),
            },
            downloads=500,
        ),
        GATED_REPO: FakeRepo(files={"gated-Q4_1.gguf": FakeFile(source=starter)}, gated=True, downloads=10),
        "lokal-test/no-gguf-here": FakeRepo(files={"README.md": FakeFile(data=b"nothing\n", lfs=False)}, tags=["safetensors"], downloads=900),
    }
    if qwen_small.exists() and qwen_big.exists():
        repos[QWEN_REPO] = FakeRepo(files={"qwen2.5-coder-1.5b-instruct-q4_k_m.gguf": FakeFile(source=qwen_big, _sha256=wheels.QWEN_CODER_1_5B.sha256)}, downloads=300)
        repos[QWEN_DRAFT_REPO] = FakeRepo(files={"qwen2.5-coder-0.5b-instruct-q4_k_m.gguf": FakeFile(source=qwen_small, _sha256=wheels.QWEN_CODER_0_5B.sha256)}, downloads=200)
    return repos


def hub_env(server: FakeHub, tmp_path: Path, token: str | None = None) -> dict[str, str]:
    env = {
        "HF_ENDPOINT": server.url,
        "HF_HOME": str(tmp_path / "hf_home"),
        "HF_HUB_DISABLE_XET": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_DISABLE_IMPLICIT_TOKEN": "0",
        "LOKAL_DATA_DIR": str(tmp_path / "lokal_data"),
    }
    if token:
        env["HF_TOKEN"] = token
    return env
