"""Turning the runtime's raw figures into labelled rows; no Qt here, so it is easy to test."""

from __future__ import annotations

from dataclasses import dataclass

# Known GenerationStats fields and how to show them; any other numeric field is shown generically,
# so figures other features add (KV restore, speculative decoding) appear without a change here.
KNOWN_STATS = {
    "prompt_tokens", "prompt_tokens_reused", "prompt_tokens_evaluated", "completion_tokens", "ttft_ms",
    "prefill_tokens_per_s", "decode_tokens_per_s", "total_ms", "rss_bytes", "finish_reason", "error",
}


# The rows the panel always has, in order; created once, so streaming only changes their text.
FIXED_ROWS = [
    ("ttft", "Time to first token"), ("prefill", "Prefill"), ("reuse", "Prompt tokens reused / evaluated"),
    ("completion", "Tokens generated"), ("total", "Turn time"), ("context", "Context used"),
    ("kv", "KV cache"), ("rss", "Runtime RAM (RSS)"),
]


@dataclass
class Row:
    key: str
    label: str
    value: str


def mb(n: float) -> str:
    return f"{n / 2**20:,.1f} MB"


def label_of(key: str) -> str:
    text = key.replace("_per_s", "/s").replace("_ms", " (ms)").replace("_", " ")
    return text[:1].upper() + text[1:]


def format_number(key: str, value: float) -> str:
    if key.endswith("_bytes"):
        return mb(value)
    if key.endswith("_rate") or key.endswith("_ratio"):
        return f"{value * 100:.0f} %" if value <= 1 else f"{value:.2f}"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.1f}"
    return f"{int(value):,}"


def rows(metrics: dict | None, stats: dict | None) -> list[Row]:
    """The panel's rows from the latest runtime.metrics result and the turn's GenerationStats."""
    metrics = metrics or {}
    stats = stats or {}
    out: list[Row] = []
    if stats:
        out.append(Row("ttft", "Time to first token", f"{stats.get('ttft_ms', 0):,.0f} ms" if stats.get("ttft_ms") else "…"))
        out.append(Row("prefill", "Prefill", f"{stats.get('prefill_tokens_per_s', 0):,.0f} tok/s" if stats.get("prefill_tokens_per_s") else "…"))
        out.append(Row("reuse", "Prompt tokens reused / evaluated", f"{stats.get('prompt_tokens_reused', 0):,} / {stats.get('prompt_tokens_evaluated', 0):,}"))
        out.append(Row("completion", "Tokens generated", f"{stats.get('completion_tokens', 0):,}"))
        if stats.get("total_ms"):
            out.append(Row("total", "Turn time", f"{stats['total_ms'] / 1000:,.2f} s"))
    n_ctx = metrics.get("n_ctx") or 0
    if n_ctx:
        used = metrics.get("kv_tokens_used", 0)
        out.append(Row("context", "Context used", f"{used:,} / {n_ctx:,} ({used / n_ctx * 100:.0f} %)"))
    if "kv_bytes_used" in metrics:
        out.append(Row("kv", "KV cache", mb(metrics["kv_bytes_used"])))
    rss = metrics.get("rss_bytes") or stats.get("rss_bytes")
    if rss:
        out.append(Row("rss", "Runtime RAM (RSS)", mb(rss)))
    for device in metrics.get("devices") or []:
        if device.get("type") in ("gpu", "igpu") and device.get("memory_total"):
            used = device["memory_total"] - device.get("memory_free", 0)
            out.append(Row(f"gpu:{device.get('name')}", f"GPU memory ({device.get('name')})", f"{mb(used)} of {mb(device['memory_total'])}"))
    for key, value in stats.items():
        if key in KNOWN_STATS or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        out.append(Row(f"extra:{key}", label_of(key), format_number(key, value)))
    return out
