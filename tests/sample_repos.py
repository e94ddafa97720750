"""The repositories the loopback hub serves in tests: GGUF files under hub-like names (the starter
model, a sparse giant, and a header-only target/draft pair that shares one tokenizer)."""

from __future__ import annotations

import threading
from pathlib import Path

from fake_hub import FakeFile, FakeHub, FakeRepo
from waiting import wait_until

SMOL_REPO = "lokal-test/SmolLM2-135M-Instruct-GGUF"
SMOL_FILE = "SmolLM2-135M-Instruct-Q4_1.gguf"
GATED_REPO = "lokal-test/gated-GGUF"
TARGET_REPO = "lokal-test/Tiny-Coder-1.5B-Instruct-GGUF"
DRAFT_REPO = "lokal-test/Tiny-Coder-0.5B-Instruct-GGUF"
TARGET_FILE = "tiny-coder-1.5b-instruct-q4_k_m.gguf"
# A vision model as ggml-org publishes them: the text model's levels and its multimodal projectors (two precisions).
VISION_REPO = "lokal-test/Tiny-VLM-GGUF"
VISION_FILE = "Tiny-VLM-Q4_1.gguf"
VISION_MMPROJ = "mmproj-Tiny-VLM-f16.gguf"
VISION_MMPROJ_Q8 = "mmproj-Tiny-VLM-Q8_0.gguf"


def make_repos(starter: Path, giant: Path, draft_pair: tuple[Path, Path], projectors: tuple[Path, Path] | None = None) -> dict[str, FakeRepo]:
    size = starter.stat().st_size
    half = size // 2
    target, draft = draft_pair
    return {
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
        TARGET_REPO: FakeRepo(files={TARGET_FILE: FakeFile(source=target)}, downloads=300),
        DRAFT_REPO: FakeRepo(files={draft.name: FakeFile(source=draft)}, downloads=200),
        **({VISION_REPO: FakeRepo(files={
            VISION_FILE: FakeFile(source=starter),
            VISION_MMPROJ_Q8: FakeFile(source=projectors[1]),
            VISION_MMPROJ: FakeFile(source=projectors[0]),
        }, downloads=5)} if projectors else {}),
    }


class Notes:
    """A runtime's notifications as they arrive; wait_until() waits (bounded) for one that matches."""

    def __init__(self):
        self.items: list[tuple[str, dict]] = []
        self._lock = threading.Lock()

    def __call__(self, method: str, params: dict) -> None:
        with self._lock:
            self.items.append((method, params))

    def __iter__(self):
        with self._lock:
            return iter(list(self.items))

    def clear(self) -> None:
        with self._lock:
            self.items.clear()

    def wait_until(self, condition, what: str, timeout: float = 120) -> tuple[str, dict]:
        """The first notification (method, params) for which `condition(method, params)` holds."""

        def found() -> tuple[str, dict] | None:
            with self._lock:
                return next((item for item in self.items if condition(*item)), None)

        return wait_until(found, timeout, lambda: f"{what} (last notification: {self.items[-1:]})")


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
