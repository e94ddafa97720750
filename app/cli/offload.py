"""`--n-gpu-layers` for `lokal chat` and `lokal serve`: auto (the default), all, off or a number, and the one
line that says where the layers went (ModelLoadResult.offload)."""

from __future__ import annotations

import argparse

from app.formatting import GIB
from runtime.protocol import OffloadReport

HELP = "layers to offload to the GPU: auto (as many as fit its free memory), all, off, or a number (default: the model's load settings, else auto)"


def gpu_layers(text: str) -> str:
    """argparse type: the GPU offload setting given ('auto', 'all', 'off' or a number of layers; -1 also means all),
    as runtime/models/load_settings stores it. Not given: None, the stored setting applies."""
    word = text.strip().lower()
    if word in ("auto", "all", "off"):
        return word
    try:
        layers = int(word)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not auto, all, off or a number of layers") from None
    if layers < -1:
        raise argparse.ArgumentTypeError(f"{text!r}: a number of layers is 0 or more (-1: all)")
    return {-1: "all", 0: "off"}.get(layers, str(layers))


def add_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--n-gpu-layers", type=gpu_layers, default=None, metavar="auto|all|off|N", help=HELP)
    # Passed on as given: the load settings' check names a bad value as it names a bad stored one.
    parser.add_argument("--split-mode", default=None, metavar="none|layer|row",
                        help="with several GPU devices: whole layers on each (layer), rows of each layer too (row), or main-gpu alone (none) (default: the model's load settings, else layer)")
    parser.add_argument("--main-gpu", type=int, default=None, metavar="N",
                        help="with several GPU devices: the one (0 for the first) that holds the model with --split-mode none, and the intermediate results otherwise (default: the model's load settings, else 0)")


def describe(report: OffloadReport | None) -> str:
    """'31/31 layers on NVIDIA GeForce RTX 4070 (1.2 GiB used, 10.3 GiB free)', or why every layer is on the CPU."""
    if report is None:
        return "GPU offload: not reported by this runtime"
    if not report.layers:
        return f"0/{report.layers_total} layers on the GPU: {report.reason}"
    where = ", ".join(f"{d.name} ({d.memory_used / GIB:.1f} GiB used, {d.memory_free / GIB:.1f} GiB free)" for d in report.devices)
    line = f"{report.layers}/{report.layers_total} layers on {where or 'the GPU'}"
    return f"{line}; {report.reason}" if report.stepped_down_from else line
