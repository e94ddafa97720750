"""The compute devices llama.cpp sees, with their memory, through ggml's backend device API.

llama-cpp-python does not wrap ggml_backend_dev_*, so they are declared here
over the same libggml it loads.
"""

from __future__ import annotations

import ctypes
import functools

from runtime.protocol import Device

_DEVICE_TYPES = {0: "cpu", 1: "gpu", 2: "igpu", 3: "accel"}


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
    lib.ggml_backend_reg_count.restype = ctypes.c_size_t
    lib.ggml_backend_reg_get.argtypes = [ctypes.c_size_t]
    lib.ggml_backend_reg_get.restype = ctypes.c_void_p
    lib.ggml_backend_reg_name.argtypes = [ctypes.c_void_p]
    lib.ggml_backend_reg_name.restype = ctypes.c_char_p
    return lib


def list_devices() -> list[Device]:
    lib = _ggml()
    devices = []
    for i in range(lib.ggml_backend_dev_count()):
        dev = lib.ggml_backend_dev_get(i)
        free, total = ctypes.c_size_t(0), ctypes.c_size_t(0)
        lib.ggml_backend_dev_memory(dev, ctypes.byref(free), ctypes.byref(total))
        name = (lib.ggml_backend_dev_description(dev) or lib.ggml_backend_dev_name(dev) or b"").decode(errors="replace")
        devices.append(Device(name=name, type=_DEVICE_TYPES.get(lib.ggml_backend_dev_type(dev), "unknown"), memory_total=total.value, memory_free=free.value))
    return devices


def backend_name() -> str:
    """The accelerated backend this build of llama.cpp has ("cuda", "metal", "vulkan"...), else "cpu"."""
    lib = _ggml()
    names = [(lib.ggml_backend_reg_name(lib.ggml_backend_reg_get(i)) or b"").decode().lower() for i in range(lib.ggml_backend_reg_count())]
    accelerated = [n for n in names if n and n not in ("cpu", "blas", "rpc")]
    return accelerated[0] if accelerated else "cpu"

