"""The session: initialize (with the devices llama.cpp sees), shutdown, and a job that waits its turn."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from runtime.protocol.version import PROTOCOL_VERSION


@dataclass
class Empty:
    pass


@dataclass
class InitializeParams:
    protocol_version: str = PROTOCOL_VERSION
    client: str = ""


GPU_DEVICE_TYPES = ("gpu", "igpu")  # device types that take offloaded layers


@dataclass
class Device:
    name: str  # the driver's description, e.g. "NVIDIA GeForce RTX 4070" or "llvmpipe (LLVM 15.0.6, 256 bits)"
    type: str  # "cpu", "gpu", "igpu", "accel"
    memory_total: int  # bytes, as ggml_backend_dev_memory reports them
    memory_free: int
    backend: str = ""  # the ggml backend it belongs to: "CPU", "CUDA", "Metal", "Vulkan", ...
    id: str = ""  # ggml's device name, e.g. "CUDA0", "Vulkan0" (what GGML_VK_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES select)


@dataclass
class InitializeResult:
    protocol_version: str
    lokal_version: str
    llama_cpp_version: str
    backend: str  # "cpu", "cuda", "metal", "vulkan", ...
    devices: list[Device]  # every device llama.cpp sees, the CPU included, with its memory
    capabilities: list[str]
    pid: int
    # The GPU backends this build of llama.cpp was built with ("cuda", "metal", "vulkan"); empty: this build runs
    # on the CPU, and n_gpu_layers changes nothing. A GPU backend with no device in `devices` found no GPU.
    gpu_backends: list[str] = field(default_factory=list)

    @property
    def gpu_devices(self) -> list[Device]:
        """The devices that can take offloaded layers; empty: every layer runs on the CPU."""
        return [d for d in self.devices if d.type in GPU_DEVICE_TYPES]


@dataclass
class ShutdownResult:
    ok: bool = True


@dataclass
class JobWaiting:
    """Notification `job.waiting`: this client's engine job waits for the API's running reply (then it runs)."""

    request_id: Union[int, str]
    method: str
