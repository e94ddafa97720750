"""Turning the runtime's figures into labelled rows; no Qt here, so it is easy to test.

`metrics` is the latest runtime.metrics result (MetricsResult); `stats` a turn's GenerationStats as
the dict a message stores (with finish_reason), so figures a newer runtime adds show up generically.
"""

from __future__ import annotations

from dataclasses import dataclass

from runtime.protocol import MetricsResult

# Known GenerationStats fields and how to show them; any other numeric field is shown generically,
# so figures other features add (KV restore, speculative decoding) appear without a change here.
KNOWN_STATS = {
    "prompt_tokens", "prompt_tokens_reused", "prompt_tokens_evaluated", "completion_tokens", "ttft_ms",
    "prefill_tokens_per_s", "decode_tokens_per_s", "total_ms", "rss_bytes", "finish_reason", "error",
    "prompt_tokens_restored", "kv_restore_ms", "kv_restore_saved_ms", "kv_restore_source",
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


def seconds(ms: float) -> str:
    return f"{ms / 1000:,.1f} s" if ms >= 1000 else f"{ms:,.0f} ms"


# Figures of a speculating reply: rows only while the reply speculates, never as a column of zeros.
SPECULATION_STATS = {
    "draft_tokens", "draft_tokens_accepted", "acceptance_rate", "mean_accepted_length", "target_passes",
    "tokens_per_target_pass", "speedup",
}
SHOWN_WHEN_NONZERO = {"context_dropped_messages"}


def restored_from_cache(stats: dict) -> list[Row]:
    """'1,820 tokens (disk, 38 ms)' and 'Time saved ≈ 20.1 s'; nothing when this turn restored nothing."""
    restored = stats.get("prompt_tokens_restored") or 0
    if not restored:
        return []
    out = [Row("restored", "Restored from cache", f"{restored:,} tokens ({stats.get('kv_restore_source') or 'cache'}, {seconds(stats.get('kv_restore_ms') or 0)})")]
    saved = stats.get("kv_restore_saved_ms")
    if saved:
        out.append(Row("restore_saved", "Time saved by the cache", f"≈ {seconds(saved)}"))
    return out


def restored_note(stats: dict) -> str:
    """The short form for a reply's footer: 'restored from cache, saved ≈ 20.1 s'."""
    if not stats.get("prompt_tokens_restored"):
        return ""
    saved = stats.get("kv_restore_saved_ms") or 0
    return "restored from cache" + (f", saved ≈ {seconds(saved)}" if saved else "")


TEMPLATE_FALLBACK_NOTE = "this model's chat template failed; using ChatML"


def template_note(stats: dict) -> str:
    """For a reply's footer: said whenever the reply was not prompted with the model's own template."""
    return TEMPLATE_FALLBACK_NOTE if stats.get("chat_template_fallback") else ""


def rows(metrics: MetricsResult | None, stats: dict | None) -> list[Row]:
    """The panel's rows from the latest runtime.metrics result and the turn's GenerationStats."""
    stats = stats or {}
    out: list[Row] = []
    if stats:
        out.append(Row("ttft", "Time to first token", f"{stats.get('ttft_ms', 0):,.0f} ms" if stats.get("ttft_ms") else "…"))
        out.append(Row("prefill", "Prefill", f"{stats.get('prefill_tokens_per_s', 0):,.0f} tok/s" if stats.get("prefill_tokens_per_s") else "…"))
        out.append(Row("reuse", "Prompt tokens reused / evaluated", f"{stats.get('prompt_tokens_reused', 0):,} / {stats.get('prompt_tokens_evaluated', 0):,}"))
        out += restored_from_cache(stats)
        out.append(Row("completion", "Tokens generated", f"{stats.get('completion_tokens', 0):,}"))
        total_ms = stats.get("total_ms")
        if total_ms:
            out.append(Row("total", "Turn time", f"{total_ms / 1000:,.2f} s"))
    if metrics is not None:
        if metrics.n_ctx:
            used = metrics.kv_tokens_used
            out.append(Row("context", "Context used", f"{used:,} / {metrics.n_ctx:,} ({used / metrics.n_ctx * 100:.0f} %)"))
        out.append(Row("kv", "KV cache", mb(metrics.kv_bytes_used)))
    rss = (metrics.rss_bytes if metrics is not None else 0) or stats.get("rss_bytes")
    if rss:
        out.append(Row("rss", "Runtime RAM (RSS)", mb(rss)))
    for device in metrics.devices if metrics is not None else []:
        if device.type in ("gpu", "igpu") and device.memory_total:
            used = device.memory_total - device.memory_free
            out.append(Row(f"gpu:{device.name}", f"GPU memory ({device.name})", f"{mb(used)} of {mb(device.memory_total)}"))
    for key, value in stats.items():
        if key in KNOWN_STATS or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if (key in SPECULATION_STATS and stats.get("speculation", "off") == "off") or (key in SHOWN_WHEN_NONZERO and not value):
            continue
        out.append(Row(f"extra:{key}", label_of(key), format_number(key, value)))
    return out
