"""The compute devices llama.cpp sees, with their memory, through ggml's backend device API.

llama-cpp-python does not wrap ggml_backend_dev_*, so they are declared here
over the same libggml it loads. Which backends a build has (CUDA, Metal,
Vulkan, or only the CPU) is read from ggml's backend registry, not from how
it was built, so a wheel built elsewhere reports what it really holds.
"""

from __future__ import annotations

import ctypes
import functools
import os

from runtime.protocol import GPU_DEVICE_TYPES, Device

_DEVICE_TYPES = {0: "cpu", 1: "gpu", 2: "igpu", 3: "accel"}
_NOT_GPU_BACKENDS = ("cpu", "blas", "rpc")

# Tests: the bytes Auto may use on the GPU, instead of each device's free memory less the desktop margin
# (a small budget gives a partial offload on any device).
BUDGET_ENV = "LOKAL_OFFLOAD_BUDGET_BYTES"


@functools.cache
def _ggml() -> ctypes.CDLL:
    from llama_cpp import _ggml  # the libggml that llama_cpp itself loaded

    lib = _ggml.libggml
    lib.ggml_backend_dev_count.restype = ctypes.c_size_t
    lib.ggml_backend_dev_get.argtypes = [ctypes.c_size_t]
    lib.ggml_backend_dev_get.restype = ctypes.c_void_p
    lib.ggml_backend_dev_name.argtypes = [ctypes.c_void_p]
    lib.ggml_backend_dev_name.restype = ctypes.c_char_p
    lib.ggml_backend_dev_description.argtypes = [ctypes.c_void_p]
    lib.ggml_backend_dev_description.restype = ctypes.c_char_p
    lib.ggml_backend_dev_type.argtypes = [ctypes.c_void_p]
    lib.ggml_backend_dev_type.restype = ctypes.c_int
    lib.ggml_backend_dev_memory.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t)]
    lib.ggml_backend_dev_memory.restype = None
    lib.ggml_backend_dev_backend_reg.argtypes = [ctypes.c_void_p]
    lib.ggml_backend_dev_backend_reg.restype = ctypes.c_void_p
    lib.ggml_backend_reg_count.restype = ctypes.c_size_t
    lib.ggml_backend_reg_get.argtypes = [ctypes.c_size_t]
    lib.ggml_backend_reg_get.restype = ctypes.c_void_p
    lib.ggml_backend_reg_name.argtypes = [ctypes.c_void_p]
    lib.ggml_backend_reg_name.restype = ctypes.c_char_p
    return lib


def _text(value: bytes | None) -> str:
    return (value or b"").decode(errors="replace")


def list_devices() -> list[Device]:
    lib = _ggml()
    devices = []
    for i in range(lib.ggml_backend_dev_count()):
        dev = lib.ggml_backend_dev_get(i)
        free, total = ctypes.c_size_t(0), ctypes.c_size_t(0)
        lib.ggml_backend_dev_memory(dev, ctypes.byref(free), ctypes.byref(total))
        ident = _text(lib.ggml_backend_dev_name(dev))
        name = _text(lib.ggml_backend_dev_description(dev)) or ident
        reg = lib.ggml_backend_dev_backend_reg(dev)
        backend = _text(lib.ggml_backend_reg_name(reg)) if reg else ""
        devices.append(
            Device(name=name, type=_DEVICE_TYPES.get(lib.ggml_backend_dev_type(dev), "unknown"), memory_total=total.value, memory_free=free.value, backend=backend, id=ident)
        )
    return devices


def gpu_devices(devices: list[Device] | None = None) -> list[Device]:
    """The devices that take offloaded layers, in llama.cpp's order (the order it splits layers across)."""
    return [d for d in (list_devices() if devices is None else devices) if d.type in GPU_DEVICE_TYPES]


def gpu_backends() -> list[str]:
    """The GPU backends this build of llama.cpp has ("cuda", "metal", "vulkan"...); empty: it runs on the CPU."""
    lib = _ggml()
    names = [_text(lib.ggml_backend_reg_name(lib.ggml_backend_reg_get(i))).lower() for i in range(lib.ggml_backend_reg_count())]
    return [n for n in names if n and n not in _NOT_GPU_BACKENDS]


def backend_name() -> str:
    """The accelerated backend this build of llama.cpp has ("cuda", "metal", "vulkan"...), else "cpu"."""
    accelerated = gpu_backends()
    return accelerated[0] if accelerated else "cpu"


def forced_budget() -> int | None:
    """BUDGET_ENV's bytes, when set (tests); None otherwise."""
    value = os.environ.get(BUDGET_ENV, "").strip()
    return int(value) if value else None
