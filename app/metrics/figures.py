"""Turning the runtime's figures into labelled rows, each with its unit; no widgets here, so it is easy to test.

`metrics` is the latest runtime.metrics result (MetricsResult); `stats` a turn's GenerationStats (a
stored reply's comes from its ReplyRecord, app/storage/reply_record.py).

Every GenerationStats field has its place in STAT_ROWS: the row that shows it, with a human label
and a unit. A field the runtime adds without a place here fails tests/app/metrics/test_metrics_panel.py,
so whoever adds a figure also says how to show it.
Labels and units go through Qt's translation system (context "Metrics").
"""

from __future__ import annotations

from dataclasses import dataclass

from app.formatting import MB
from app.storage.store import COMPLETE, FAILED, INTERRUPTED, STOPPED
from app.ui.language import Context
from runtime.protocol import FinishReason, GenerationStats, MetricsResult, OffloadReport

Metrics = Context("Metrics")

# Sections of the panel, in order.
REPLY, SPECULATION, MEMORY = "reply", "speculation", "memory"


def section_title(section: str) -> str:
    return {
        REPLY: Metrics.tr("This reply"),
        SPECULATION: Metrics.tr("Speculative decoding"),
        MEMORY: Metrics.tr("Memory"),
    }[section]


# Where each GenerationStats field is shown: the key of its row (or, for the first few, what shows it
# instead). A new field needs an entry here, and the row that renders it below.
STAT_ROWS: dict[str, str] = {
    "prompt_tokens": "prompt",
    "prompt_tokens_reused": "reuse",
    "prompt_tokens_evaluated": "reuse",
    "completion_tokens": "completion",
    "ttft_ms": "ttft",
    "prefill_tokens_per_s": "prefill",
    "decode_tokens_per_s": "decode",  # the panel's big figure and its sparkline, not a row
    "total_ms": "total",
    "rss_bytes": "rss",
    "prompt_tokens_restored": "restored",
    "kv_restore_ms": "restored",
    "kv_restore_source": "restored",
    "kv_restore_saved_ms": "restore_saved",
    "context_dropped_messages": "dropped",
    "speculation": "mode",
    "speculation_notice": "speculation_notice",
    "speculation_cannot_rewind": "speculation_notice",
    "draft_tokens": "accepted",
    "draft_tokens_accepted": "accepted",
    "acceptance_rate": "accepted",
    "mean_accepted_length": "per_draft",
    "target_passes": "per_pass",
    "tokens_per_target_pass": "per_pass",
    "speedup": "speedup",
    "chat_template_fallback": "template",
    "lookup_draft_tokens": "by_lookup",
    "lookup_draft_tokens_accepted": "by_lookup",
    "model_draft_tokens": "by_model",
    "model_draft_tokens_accepted": "by_model",
    "reasoning_tokens": "reasoning",
    "thinking_ms": "reasoning",
    "answer_tokens": "answer",
    "ttfat_ms": "ttfat",
    "context_full": "completion",  # "350 tokens, context full"
    "prompt_image_positions": "prompt",  # "290 tokens, 256 of them pictures"
}
# Rows whose value is a sentence from the runtime rather than a figure (they wrap).
FREE_TEXT_ROWS = {"speculation_notice", "template"}

# Rows that come and go shown right under a given row rather than at their section's end: a thinking reply's
# time to its first answer token beside the time to its first token, its thinking and answer under "Generated".
PLACED_AFTER = {"ttfat": "ttft", "reasoning": "completion", "answer": "reasoning", "parallel": "kv"}

# The rows the panel always has, in order; created once, so streaming only changes their text.
FIXED_ROWS = [
    (REPLY, "ttft"), (REPLY, "prefill"), (REPLY, "prompt"), (REPLY, "reuse"), (REPLY, "completion"), (REPLY, "total"),
    (MEMORY, "context"), (MEMORY, "kv"), (MEMORY, "rss"),
]


def fixed_label(key: str) -> str:
    return {
        "ttft": Metrics.tr("Time to first token"),
        "prefill": Metrics.tr("Prompt reading speed"),
        "prompt": Metrics.tr("Prompt"),
        "reuse": Metrics.tr("Reused / newly read"),
        "completion": Metrics.tr("Generated"),
        "total": Metrics.tr("Reply time"),
        "context": Metrics.tr("Context used"),
        "kv": Metrics.tr("KV cache"),
        "rss": Metrics.tr("Runtime memory (RAM)"),
    }[key]


@dataclass
class Row:
    key: str
    label: str
    value: str
    section: str = REPLY


def number(n: float, decimals: int = 0) -> str:
    """Digits grouped the way the user's language groups them (Qt's default locale)."""
    from PySide6.QtCore import QLocale

    return QLocale().toString(float(n), "f", decimals) if decimals else QLocale().toString(int(round(n)))


def tokens(n: int) -> str:
    return Metrics.tr("%Ln token(s)", None, int(n))


def mb(n: float) -> str:
    return Metrics.tr("{size} MB").format(size=number(n / MB, 1))


def seconds(ms: float) -> str:
    if ms >= 1000:
        return Metrics.tr("{seconds} s").format(seconds=number(ms / 1000, 1))
    return Metrics.tr("{ms} ms").format(ms=number(ms))


def speed(tokens_per_s: float) -> str:
    return Metrics.tr("{rate} tok/s").format(rate=number(tokens_per_s, 1 if tokens_per_s < 100 else 0))


# Fewer tokens than this read in one pass time a decoding step, not reading: a conversation restored from the cache
# reads one or two, and "14.1 tok/s" beside "restored from cache" said its prompt was read slowly. The runtime asks
# more (runtime/kvstore/saved_states.MEASURED_PREFILL_TOKENS, 32) of the pass it learns a per-token cost from: that
# cost is multiplied by thousands of restored tokens, a figure shown here is only read.
PROMPT_SPEED_FROM = 8


def prompt_speed(tokens_per_s: float, evaluated: int) -> str:
    if not tokens_per_s:
        return "…"
    if evaluated < PROMPT_SPEED_FROM:
        return Metrics.tr("— ({tokens} read)").format(tokens=tokens(evaluated))
    return speed(tokens_per_s)


def percent(fraction: float) -> str:
    return Metrics.tr("{percent} %").format(percent=number(fraction * 100))


def speedup_words(speedup: float) -> str:
    """'1.7× faster than plain decoding': the decode rate against the plain rate measured on this machine."""
    if speedup >= 1.05:
        return Metrics.tr("{factor}× faster than plain decoding").format(factor=number(speedup, 1))
    if speedup > 0.95:
        return Metrics.tr("about as fast as plain decoding")
    return Metrics.tr("{factor}× the speed of plain decoding").format(factor=number(speedup, 1))


def mode_words(mode: str) -> str:
    """The speculation setting the reply ran with."""
    return {
        "lookup": Metrics.tr("prompt lookup"),
        "draft": Metrics.tr("draft model"),
        "both": Metrics.tr("prompt lookup, then draft model"),
        "auto": Metrics.tr("automatic"),
    }.get(mode, mode)


def restore_source_words(source: str) -> str:
    return {"ram": Metrics.tr("memory"), "disk": Metrics.tr("disk")}.get(source, Metrics.tr("cache"))


def restored_from_cache(stats: GenerationStats) -> list[Row]:
    """'1,820 tokens (disk, 38 ms)' and 'Time saved ≈ 20.1 s'; nothing when this turn restored nothing."""
    restored = stats.prompt_tokens_restored
    if not restored:
        return []
    value = Metrics.tr("{tokens} ({source}, {time})").format(
        tokens=tokens(restored), source=restore_source_words(stats.kv_restore_source), time=seconds(stats.kv_restore_ms)
    )
    out = [Row("restored", Metrics.tr("Restored from cache"), value)]
    saved = stats.kv_restore_saved_ms
    if saved:
        out.append(Row("restore_saved", Metrics.tr("Time saved by the cache"), "≈ " + seconds(saved)))
    return out


def restored_note(stats: GenerationStats) -> str:
    """The short form for a reply's footer: 'restored from cache, saved ≈ 20.1 s'."""
    if not stats.prompt_tokens_restored:
        return ""
    saved = stats.kv_restore_saved_ms
    if saved:
        return Metrics.tr("restored from cache, saved ≈ {time}").format(time=seconds(saved))
    return Metrics.tr("restored from cache")


def drafted(stats: GenerationStats) -> bool:
    """The reply drafted tokens: only then do the speculation rows mean anything."""
    return stats.draft_tokens > 0


def speculation_rows(stats: GenerationStats, draft_model: str = "") -> list[Row]:
    """`draft_model`: the file name of the draft model loaded with the target ("" for none)."""
    rows = []
    if stats.speculation_cannot_rewind:  # speculation was asked for and switched off: said in the window's words
        why = Metrics.tr("a {architecture} model cannot take back part of its cache, so nothing is drafted").format(
            architecture=stats.speculation_cannot_rewind)
        rows.append(Row("speculation_notice", Metrics.tr("Speculation off"), why, SPECULATION))
    elif stats.speculation_notice:  # a reason the window has no words of its own for: the runtime's
        rows.append(Row("speculation_notice", Metrics.tr("Speculation off"), stats.speculation_notice, SPECULATION))
    if not drafted(stats):
        return rows
    if stats.speedup:
        rows.append(Row("speedup", Metrics.tr("Speed-up"), speedup_words(stats.speedup), SPECULATION))
    rows.append(Row("mode", Metrics.tr("Mode"), mode_words(stats.speculation), SPECULATION))
    if draft_model and stats.speculation in ("auto", "draft", "both"):  # the modes that draft with it
        rows.append(Row("draft_model", Metrics.tr("Draft model"), draft_model, SPECULATION))
    accepted = Metrics.tr("{accepted} of {drafted} drafted ({rate})").format(
        accepted=number(stats.draft_tokens_accepted), drafted=number(stats.draft_tokens), rate=percent(stats.acceptance_rate)
    )
    rows.append(Row("accepted", Metrics.tr("Accepted"), accepted, SPECULATION))
    rows += drafter_rows(stats)
    rows.append(Row("per_draft", Metrics.tr("Accepted per draft"), tokens_per(stats.mean_accepted_length), SPECULATION))
    per_pass = Metrics.tr("{tokens} in %Ln pass(es)", None, stats.target_passes).format(tokens=tokens_per(stats.tokens_per_target_pass))
    rows.append(Row("per_pass", Metrics.tr("Per model pass"), per_pass, SPECULATION))
    return rows


def drafter_rows(stats: GenerationStats) -> list[Row]:
    """Each drafter's part of "Accepted", side by side, for those that drafted this turn: 'By prompt lookup:
    12 of 20 (60 %)', 'By the draft model: 30 of 34 (88 %)'."""
    out = []
    for key, label, drafted_n, accepted_n in (
        ("by_lookup", Metrics.tr("By prompt lookup"), stats.lookup_draft_tokens, stats.lookup_draft_tokens_accepted),
        ("by_model", Metrics.tr("By the draft model"), stats.model_draft_tokens, stats.model_draft_tokens_accepted),
    ):
        if drafted_n:
            value = Metrics.tr("{accepted} of {drafted} ({rate})").format(
                accepted=number(accepted_n), drafted=number(drafted_n), rate=percent(accepted_n / drafted_n))
            out.append(Row(key, label, value, SPECULATION))
    return out


def tokens_per(mean: float) -> str:
    return Metrics.tr("{mean} tokens").format(mean=number(mean, 1))


def template_fallback_note() -> str:
    return Metrics.tr("this model's chat template failed; using ChatML")


def template_note(stats: GenerationStats) -> str:
    """For a reply's footer: said whenever the reply was not prompted with the model's own template."""
    return template_fallback_note() if stats.chat_template_fallback else ""


def rows(metrics: MetricsResult | None, stats: GenerationStats | None, draft_model: str = "", parallel_asked: int = 0) -> list[Row]:
    """The panel's rows from the latest runtime.metrics result and the turn's GenerationStats (None: no reply
    figures yet), the name of the draft model loaded with the target, if any, and the parallel replies the
    load asked for (0: not known)."""
    out: list[Row] = []
    if stats is not None:
        ttft, prefill = stats.ttft_ms, stats.prefill_tokens_per_s
        out.append(Row("ttft", fixed_label("ttft"), seconds(ttft) if ttft else "…"))
        out.append(Row("prefill", fixed_label("prefill"), prompt_speed(prefill, stats.prompt_tokens_evaluated)))
        if stats.reasoning_tokens:  # only a thinking reply's first answer token comes later than its first token
            out.append(Row("ttfat", Metrics.tr("Time to first answer token"), seconds(stats.ttfat_ms) if stats.ttfat_ms else "…"))
        if stats.prompt_tokens:
            prompt = tokens(stats.prompt_tokens)
            if stats.prompt_image_positions:
                prompt = Metrics.tr("{tokens}, {pictures} of them pictures").format(tokens=prompt, pictures=number(stats.prompt_image_positions))
            out.append(Row("prompt", fixed_label("prompt"), prompt))
        reuse = Metrics.tr("{reused} / {evaluated}").format(reused=number(stats.prompt_tokens_reused), evaluated=tokens(stats.prompt_tokens_evaluated))
        out.append(Row("reuse", fixed_label("reuse"), reuse))
        out += restored_from_cache(stats)
        generated = tokens(stats.completion_tokens)
        if stats.context_full:
            generated = Metrics.tr("{tokens}, context full").format(tokens=generated)
        out.append(Row("completion", fixed_label("completion"), generated))
        out += reasoning_rows(stats)
        if stats.total_ms:
            out.append(Row("total", fixed_label("total"), Metrics.tr("{seconds} s").format(seconds=number(stats.total_ms / 1000, 2))))
        if stats.chat_template_fallback:  # the error itself is in the reply's footer tooltip
            out.append(Row("template", Metrics.tr("Chat template"), template_fallback_note()))
        dropped = stats.context_dropped_messages
        if dropped:
            out.append(Row("dropped", Metrics.tr("Left out (context full)"), Metrics.tr("%Ln earlier message(s)", None, dropped)))
        out += speculation_rows(stats, draft_model)
    if metrics is not None:
        if metrics.n_ctx:
            used = metrics.kv_tokens_used
            # Short enough to stay on the label's line at the panel's default width, even for a 128k context.
            value = Metrics.tr("{used} / {total}").format(used=number(used), total=tokens(metrics.n_ctx))
            out.append(Row("context", fixed_label("context"), value, MEMORY))
        out.append(Row("kv", fixed_label("kv"), mb(metrics.kv_bytes_used), MEMORY))
        if metrics.n_seq:
            out.append(parallel_row(metrics.n_seq, parallel_asked))
    rss = (metrics.rss_bytes if metrics is not None else 0) or (stats.rss_bytes if stats is not None else 0)
    if rss:
        out.append(Row("rss", fixed_label("rss"), mb(rss), MEMORY))
    offload = offload_row(metrics.offload if metrics is not None else None)
    if offload is not None:
        out.append(offload)
    for device in metrics.devices if metrics is not None else []:
        if device.type in ("gpu", "igpu") and device.memory_total:
            used = device.memory_total - device.memory_free
            label = Metrics.tr("GPU memory ({device})").format(device=device.name)
            out.append(Row(f"gpu:{device.name}", label, Metrics.tr("{used} of {total}").format(used=mb(used), total=mb(device.memory_total)), MEMORY))
    return out


def reasoning_rows(stats: GenerationStats) -> list[Row]:
    """A thinking reply's 'Thinking: 320 tokens, 12.4 s' and 'Answer: 30 tokens'; nothing for a reply that did not think."""
    if not stats.reasoning_tokens:
        return []
    thought = tokens(stats.reasoning_tokens)
    if stats.thinking_ms:
        thought = Metrics.tr("{tokens}, {time}").format(tokens=thought, time=seconds(stats.thinking_ms))
    return [Row("reasoning", Metrics.tr("Thinking"), thought), Row("answer", Metrics.tr("Answer"), tokens(stats.answer_tokens))]


def parallel_row(loaded: int, asked: int) -> Row:
    """How many conversations the context holds at once, each with a cache of its own: 'fewer fit' where the
    runtime loaded fewer than asked (memory, or GPU layers it would have cost: runtime/engine/engine.py)."""
    value = Metrics.tr("%Ln conversation(s)", None, loaded)
    if 0 < loaded < asked:
        value = Metrics.tr("{loaded} ({asked} asked; fewer fit)").format(loaded=value, asked=number(asked))
    return Row("parallel", Metrics.tr("Parallel replies"), value, MEMORY)


def offload_row(report: OffloadReport | None) -> Row | None:
    """Where the loaded model's layers are: '31/31 layers on NVIDIA GeForce RTX 4070', or 'on the CPU'."""
    if report is None:
        return None
    if report.layers:
        devices = ", ".join(d.name for d in report.devices) or Metrics.tr("the GPU")
        value = Metrics.tr("{layers}/{total} layers on {device}").format(layers=report.layers, total=report.layers_total, device=devices)
        if report.stepped_down_from:  # Auto planned more, and llama.cpp could not allocate them
            value += " " + Metrics.tr("(stepped down from {layers})").format(layers=report.stepped_down_from[0])
    else:
        value = Metrics.tr("all {total} layers on the CPU").format(total=report.layers_total)
    return Row("offload", Metrics.tr("GPU offload"), value, MEMORY)


def finish_words(reason: FinishReason | None, state: str = COMPLETE) -> str:
    """Why the last reply ended, in words: 'Last reply: reached the token limit'. `state` is the stored reply's
    (app/storage/store.py): one that failed, was interrupted or was stopped with the window has no finish reason."""
    ended = {
        FAILED: Metrics.tr("Last reply: failed"),
        INTERRUPTED: Metrics.tr("Last reply: interrupted, the runtime stopped"),
        STOPPED: Metrics.tr("Last reply: stopped"),
    }
    words: dict[str | None, str] = {
        "stop": Metrics.tr("Last reply: complete"),
        "length": Metrics.tr("Last reply: reached the token limit"),
        "cancelled": Metrics.tr("Last reply: stopped"),
        "tool_calls": Metrics.tr("Last reply: asked to call a tool"),
    }
    return ended.get(state) or words.get(reason) or Metrics.tr("Last reply")
