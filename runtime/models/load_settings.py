"""Per-model load settings: one file in the config folder, keyed by the model file's identity.

The window (Model ▸ Load settings…), `lokal chat` and `lokal serve` all read a model's settings with
`read()` and turn them into a load with `load_params()`; only `write()` changes the file. So a context
length or a thread count chosen once applies wherever the model is loaded, and a command-line flag
(an override given to load_params) changes it for that run only, never in the file.

Keyed by identity (runtime/models/identity.py: size and hashes of the first and last MiB), so a
moved or renamed file keeps its settings and a replaced one starts from the defaults. A value the
file holds that cannot be used is an error naming the model and the field (`SettingsError`); the
file itself is never rewritten behind the user's back, so nothing they set is lost.

    {"version": 1, "models": {"<identity>": {"path": "/where/it/was/seen.gguf", "n_ctx": 8192, ...}}}
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Sequence

from runtime.models.identity import file_identity
from runtime.protocol import Device, KvType, ModelLoadParams, SpeculationMode, SplitMode

if TYPE_CHECKING:
    from runtime.gguf.reader import GGUFHeader

FILE_NAME = "model-settings.json"
VERSION = 1
MIN_DEFAULT_CONTEXT = 4096  # the default context never goes below this where it fits (nor above what the model was trained for)
NO_TRAINED_CONTEXT = 4096  # a header that does not say its trained context
OFFLOAD_WORDS = ("auto", "all", "off")
FLASH_ATTN_WORDS: dict[str, Optional[bool]] = {"auto": None, "on": True, "off": False}  # as the command line and the dialog say them

# Sampling defaults a GGUF may carry (llama.cpp's general.sampling.* keys), and the request field each sets.
SAMPLING_KEYS = {
    "general.sampling.temp": "temperature",
    "general.sampling.top_p": "top_p",
    "general.sampling.top_k": "top_k",
    "general.sampling.min_p": "min_p",
    "general.sampling.penalty_repeat": "repeat_penalty",
}

_write_lock = threading.Lock()


class SettingsError(ValueError):
    """A stored or given setting that cannot be used; the message names the field."""


@dataclass
class LoadSettings:
    gpu_offload: str = "auto"  # "auto" (as many layers as fit), "all", "off" (CPU only) or a number of layers
    n_ctx: Optional[int] = None  # None: the trained context, capped by what fits (default_context)
    type_k: KvType = "f16"  # the KV cache's types
    type_v: KvType = "f16"
    draft: str = "auto"  # "auto" (the smallest compatible model on disk), "none", or a GGUF file's path
    speculation: SpeculationMode = "auto"
    n_seq: int = 4  # conversations held in the context at once
    n_threads: Optional[int] = None  # None: the runtime's choice
    # None: Auto, llama.cpp's choice, on (ModelLoadParams.flash_attn). False is faster on a CPU, and takes memory for
    # attention scores (counted); with a quantized V cache it cannot load: llama.cpp needs it there.
    flash_attn: Optional[bool] = None
    # With more than one GPU device (ModelLoadParams.split_mode, main_gpu): llama.cpp's defaults.
    split_mode: SplitMode = "layer"
    main_gpu: int = 0

    def changed_from(self, other: "LoadSettings") -> list[str]:
        """The fields that differ from `other`'s (each needs a reload but `speculation`, which applies per reply)."""
        return [f.name for f in dataclasses.fields(self) if getattr(self, f.name) != getattr(other, f.name)]


RELOAD_FREE = {"speculation"}  # a change of these applies from the next reply, without a reload


def settings_file() -> Path:
    from runtime.paths import config_dir

    return config_dir() / FILE_NAME


def check(settings: LoadSettings, where: str = "settings") -> LoadSettings:
    """`settings` if every field can be used, else SettingsError naming the first that cannot."""
    offload = settings.gpu_offload
    if not (offload in OFFLOAD_WORDS or (isinstance(offload, str) and offload.isdigit())):
        raise SettingsError(f"{where}.gpu_offload: {offload!r} is not auto, all, off or a number of layers")
    for name, low in (("n_ctx", 256), ("n_seq", 1), ("n_threads", 1)):
        value = getattr(settings, name)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < low):
            raise SettingsError(f"{where}.{name}: {value!r} is not a whole number of at least {low}")
    if settings.n_seq is None:
        raise SettingsError(f"{where}.n_seq: a number of at least 1 is needed")
    for name in ("type_k", "type_v"):
        if getattr(settings, name) not in typing.get_args(KvType):
            raise SettingsError(f"{where}.{name}: {getattr(settings, name)!r} is not one of {', '.join(typing.get_args(KvType))}")
    if settings.flash_attn is not None and not isinstance(settings.flash_attn, bool):
        raise SettingsError(f"{where}.flash_attn: {settings.flash_attn!r} is not true (on), false (off) or null (auto)")
    if settings.flash_attn is False and settings.type_v != "f16":
        raise SettingsError(f"{where}.flash_attn: off cannot go with a quantized V cache (type_v {settings.type_v}), which needs flash attention: "
                            "make it auto or on, or the KV cache type f16")
    if settings.speculation not in typing.get_args(SpeculationMode):
        raise SettingsError(f"{where}.speculation: {settings.speculation!r} is not one of {', '.join(typing.get_args(SpeculationMode))}")
    if settings.split_mode not in typing.get_args(SplitMode):
        raise SettingsError(f"{where}.split_mode: {settings.split_mode!r} is not one of {', '.join(typing.get_args(SplitMode))}")
    main_gpu = settings.main_gpu
    if not isinstance(main_gpu, int) or isinstance(main_gpu, bool) or main_gpu < 0:
        raise SettingsError(f"{where}.main_gpu: {main_gpu!r} is not a GPU device's index (0 for the first)")
    if not isinstance(settings.draft, str) or not settings.draft:
        raise SettingsError(f"{where}.draft: {settings.draft!r} is not auto, none or a file's path")
    return settings


def _read_file() -> dict[str, Any]:
    path = settings_file()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"version": VERSION, "models": {}}
    except (OSError, ValueError) as exc:
        raise SettingsError(f"{path}: cannot be read as settings ({exc}); fix or remove it") from None
    if not isinstance(data, dict) or not isinstance(data.get("models", {}), dict):
        raise SettingsError(f"{path}: \"models\" is not an object of settings by model; fix or remove it")
    data.setdefault("models", {})
    return data


def read(identity: str) -> LoadSettings:
    """The stored settings of the model file whose identity is `identity` (the defaults if none are stored)."""
    stored = _read_file()["models"].get(identity)
    if stored is None:
        return LoadSettings()
    where = f"{settings_file()}: models.{identity}"
    if not isinstance(stored, dict):
        raise SettingsError(f"{where} is not an object")
    known = {f.name for f in dataclasses.fields(LoadSettings)}
    unknown = sorted(set(stored) - known - {"path"})
    if unknown:
        raise SettingsError(f"{where}: unknown field(s) {', '.join(unknown)}")
    return check(LoadSettings(**{k: v for k, v in stored.items() if k in known}), where)


def read_for(path: str | os.PathLike[str]) -> LoadSettings:
    """The stored settings of the model file at `path`."""
    return read(file_identity(path))


def write(path: str | os.PathLike[str], settings: LoadSettings) -> None:
    """Store `settings` for the model file at `path` (by its identity); the only writer of the file."""
    check(settings)
    identity = file_identity(path)
    with _write_lock:
        data = _read_file()
        entry = {"path": os.fspath(path), **dataclasses.asdict(settings)}
        data["models"][identity] = entry
        data["version"] = VERSION
        target = settings_file()
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, target)


def offload_layers(gpu_offload: str) -> Optional[int]:
    """ModelLoadParams.n_gpu_layers for a GPU offload setting: auto None (as many as fit), all -1, off 0, N N."""
    if gpu_offload == "auto":
        return None
    if gpu_offload == "all":
        return -1
    if gpu_offload == "off":
        return 0
    if gpu_offload.isdigit():
        return int(gpu_offload)
    raise SettingsError(f"gpu_offload: {gpu_offload!r} is not auto, all, off or a number of layers")


def default_context(header: GGUFHeader, type_k: str = "f16", type_v: str = "f16", ram_available: int | None = None, devices: Sequence[Device] = (),
                    flash_attn: Optional[bool] = None) -> int:
    """The model's trained context, capped by what fits this machine's memory (the fit model.load applies,
    runtime/llama/memory.py, with the attention scores flash attention set off keeps), never below
    MIN_DEFAULT_CONTEXT where that fits."""
    from runtime.llama import memory

    trained = header.context_length or NO_TRAINED_CONTEXT
    floor = min(trained, MIN_DEFAULT_CONTEXT)
    ram = memory.available_ram() if ram_available is None else ram_available
    n_ctx = trained
    while n_ctx > floor:
        if memory.fit_verdict(memory.estimate_load(header, n_ctx, type_k, type_v, flash_attn=flash_attn is not False), list(devices), ram).label != "too_big":
            return n_ctx
        n_ctx = max(floor, n_ctx // 2)
    return floor  # the floor, fitting or not: a load that does not fit then says why


def sampling_defaults(header: GGUFHeader) -> dict[str, float | int]:
    """The sampling settings the model's file recommends (general.sampling.*), by request field; {} if none."""
    found: dict[str, float | int] = {}
    for key, field in SAMPLING_KEYS.items():
        value = header.metadata.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            found[field] = int(value) if field == "top_k" else float(value)
    return found



def load_params(path: str, settings: LoadSettings, draft_path: Optional[str] = None, header: GGUFHeader | None = None, **overrides: Any) -> ModelLoadParams:
    """The model.load request for the file at `path` with `settings`; `overrides` (a command-line flag, a
    conversation's own context) replace a setting for this load only, and None means "not given".
    `draft_path` is the draft model already chosen for settings.draft (runtime/models/drafts.py resolves auto)."""
    given = {name: value for name, value in overrides.items() if value is not None}
    known = {f.name for f in dataclasses.fields(LoadSettings)}
    unknown = sorted(set(given) - known)
    if unknown:
        raise TypeError(f"load_params: unknown override(s) {', '.join(unknown)}")
    chosen = check(dataclasses.replace(settings, **given), "override")
    n_ctx = chosen.n_ctx
    if n_ctx is None:
        if header is None:
            from runtime.gguf.reader import read_file_header

            header = read_file_header(path)
        n_ctx = default_context(header, chosen.type_k, chosen.type_v, flash_attn=chosen.flash_attn)
    fields: dict[str, Any] = dict(path=path, n_ctx=n_ctx, type_k=chosen.type_k, type_v=chosen.type_v, flash_attn=chosen.flash_attn,
                                  n_threads=chosen.n_threads, n_seq=chosen.n_seq, draft_path=draft_path,
                                  split_mode=chosen.split_mode, main_gpu=chosen.main_gpu)
    layers = offload_layers(chosen.gpu_offload)
    if layers is not None:
        fields["n_gpu_layers"] = layers  # auto: ModelLoadParams' own default (as many layers as fit, once the runtime offloads by itself)
    return ModelLoadParams(**fields)
