"""The metrics rows (figures.py, no widgets) and the panel that renders them in sections."""

from __future__ import annotations

import dataclasses
import re
import typing

from app.formatting import MB
from app.metrics import figures
from app.metrics.panel import MetricsPanel
from app.storage import store as st
from app.storage.reply_record import ReplyRecord
from runtime.protocol import Device, DeviceUse, FinishReason, GenerationStats, MetricsResult, OffloadReport

METRICS = MetricsResult(rss_bytes=3 * MB, model_id="m", n_ctx=2048, kv_tokens_used=512, kv_bytes_used=2 * MB,
                        devices=[Device(name="GPU0", type="gpu", memory_total=1000 * MB, memory_free=500 * MB)])


def every_stat_set(**overrides) -> GenerationStats:
    """A GenerationStats with every figure non-zero."""
    values = {name: {int: 7, float: 2.5, str: "x", bool: True}.get(kind, 1) for name, kind in typing.get_type_hints(GenerationStats).items()}
    values.update(speculation="lookup", kv_restore_source="disk", acceptance_rate=0.7, speedup=1.74)
    values.update(overrides)
    return GenerationStats(**values)


def finished(stats: GenerationStats | None, finish_reason: FinishReason = "stop") -> ReplyRecord:
    """The record a reply that ended leaves (what the panel gets when it finishes)."""
    return ReplyRecord(stats, finish_reason)


def test_every_figure_of_the_runtime_has_a_place_and_no_raw_key_reaches_the_screen(english):
    fields = {f.name for f in dataclasses.fields(GenerationStats)}
    without_a_row = sorted(fields - set(figures.STAT_ROWS))
    assert not without_a_row, f"give these GenerationStats fields a row (label and unit) in app/metrics/figures.py STAT_ROWS: {without_a_row}"
    rows = figures.rows(METRICS, every_stat_set())
    shown_keys = {row.key for row in rows} | {"decode"}  # decode speed is the panel's big figure
    assert set(figures.STAT_ROWS.values()) <= shown_keys, set(figures.STAT_ROWS.values()) - shown_keys
    for row in rows:
        assert row.label and "_" not in row.label and row.label[0].isupper(), row
        # Each value says its unit (tokens, ms, s, MB, %, ×, words), never a bare number.
        assert re.search(r"[A-Za-z%×]", row.value), row


def test_speculation_rows_only_for_a_reply_that_drafted_and_the_speed_up_in_words(english):
    drafted = {r.key: r for r in figures.rows(METRICS, every_stat_set(draft_tokens=60, draft_tokens_accepted=42, acceptance_rate=0.7,
                                                                     speculation_notice=""))}
    assert drafted["speedup"].value == "1.7× faster than plain decoding"
    assert drafted["accepted"].value == "42 of 60 drafted (70 %)"
    assert drafted["mode"].value == "prompt lookup"
    assert {r.section for r in drafted.values() if r.key in ("speedup", "accepted", "per_draft", "per_pass")} == {figures.SPECULATION}

    # A reply that speculated but drafted nothing: no speculation rows at all, so no "Speedup 0.4".
    quiet = {r.key for r in figures.rows(METRICS, every_stat_set(draft_tokens=0, draft_tokens_accepted=0, speedup=0.4, speculation_notice=""))}
    assert not quiet & {"speedup", "accepted", "per_draft", "per_pass", "mode"}
    # Speed-up not measured yet: the other rows, but no speed-up claim.
    unmeasured = {r.key for r in figures.rows(METRICS, every_stat_set(draft_tokens=5, speedup=0.0))}
    assert "speedup" not in unmeasured and "accepted" in unmeasured
    assert figures.speedup_words(1.0) == "about as fast as plain decoding"
    assert figures.speedup_words(0.6) == "0.6× the speed of plain decoding"


def test_speculation_switched_off_for_a_model_that_cannot_rewind_is_said_in_the_window_s_language(indonesian):
    off = every_stat_set(draft_tokens=0, speculation="off", speculation_cannot_rewind="mamba",
                         speculation_notice="speculative decoding is off: a mamba model cannot rewind part of its cache to the last accepted token")
    (row,) = [r for r in figures.rows(METRICS, off) if r.key == "speculation_notice"]
    assert row.label == "Spekulasi mati" and "mamba" in row.value and "cannot" not in row.value, row


def test_memory_and_reply_rows_say_their_units(english):
    rows = {r.key: r for r in figures.rows(METRICS, GenerationStats(ttft_ms=120.0, prefill_tokens_per_s=850.0, prompt_tokens=1820,
                                                                    prompt_tokens_reused=1800, prompt_tokens_evaluated=20,
                                                                    completion_tokens=1, total_ms=2500.0, context_dropped_messages=0))}
    assert rows["ttft"].value == "120 ms" and rows["prefill"].value == "850 tok/s"
    assert rows["prompt"].value == "1,820 tokens" and rows["reuse"].value == "1,800 / 20 tokens"
    assert rows["completion"].value == "1 token" and rows["total"].value == "2.50 s"
    assert rows["context"].value == "512 / 2,048 tokens"
    assert rows["kv"].value == "2.0 MB" and rows["rss"].value == "3.0 MB"
    assert rows["gpu:GPU0"].value == "500.0 MB of 1,000.0 MB" and rows["gpu:GPU0"].label == "GPU memory (GPU0)"
    assert "dropped" not in rows  # shown only once messages were left out
    assert "parallel" not in rows  # no sequence count from the runtime: no row


def test_the_panel_says_how_many_conversations_the_context_holds_and_when_fewer_than_asked_fit(qtbot, english):
    panel = MetricsPanel()
    qtbot.addWidget(panel)
    panel.on_turn_finished(None, dataclasses.replace(METRICS, n_seq=4))
    assert panel.value_of("parallel") == "4 conversations" and panel.label_of("parallel") == "Parallel replies"
    memory_keys = [key for section, key, _label in panel._shown if section == figures.MEMORY]
    assert memory_keys.index("parallel") == memory_keys.index("kv") + 1  # beside the cache it multiplies
    panel.set_parallel_asked(4)
    assert panel.value_of("parallel") == "4 conversations"
    panel.on_turn_finished(None, dataclasses.replace(METRICS, n_seq=1))
    assert panel.value_of("parallel") == "1 conversation (4 asked; fewer fit)"


def test_a_prompt_speed_is_not_given_for_the_token_or_two_a_restored_conversation_reads(english):
    """One token read in a pass is a decoding step's time: 14.1 tok/s beside "restored from cache" looked slow."""
    restored = GenerationStats(ttft_ms=112.0, prefill_tokens_per_s=14.1, prompt_tokens=227, prompt_tokens_evaluated=1, prompt_tokens_restored=226)
    rows = {r.key: r for r in figures.rows(METRICS, restored)}
    assert rows["prefill"].value == "— (1 token read)" and rows["ttft"].value == "112 ms"
    read = GenerationStats(ttft_ms=120.0, prefill_tokens_per_s=850.0, prompt_tokens=227, prompt_tokens_evaluated=figures.PROMPT_SPEED_FROM)
    assert {r.key: r for r in figures.rows(METRICS, read)}["prefill"].value == "850 tok/s"


def test_the_panel_shows_sections_and_hides_speculation_without_drafting(qtbot, english):
    panel = MetricsPanel()
    qtbot.addWidget(panel)
    panel.on_turn_finished(finished(every_stat_set(draft_tokens=60, draft_tokens_accepted=42, speculation_notice="")), METRICS)
    assert panel.speed.text() == "2.5 tok/s"
    assert panel.section_visible(figures.SPECULATION)
    assert panel.value_of("speedup") == "1.7× faster than plain decoding" and panel.label_of("speedup") == "Speed-up"
    assert panel.state.text() == "Last reply: complete"
    panel.on_turn_finished(finished(GenerationStats(decode_tokens_per_s=10.0, speculation="auto", draft_tokens=0, speedup=0.4), "length"))
    assert not panel.section_visible(figures.SPECULATION) and panel.value_of("speedup") is None
    assert panel.value_of("ttft") == "…" and panel.state.text() == "Last reply: reached the token limit"
    # The figures' labels are what a screen reader reads for each value.
    assert panel._rows["ttft"].value.accessibleName() == "Time to first token"


def test_a_reply_that_ended_without_a_finish_reason_says_how_it_ended(qtbot, english):
    """Seen in the window: a failed reply left "Last reply" with nothing after it, and a conversation whose reply was
    stopped by closing the window (no record kept) said "No reply yet"."""
    panel = MetricsPanel()
    qtbot.addWidget(panel)
    panel.on_turn_finished(ReplyRecord(error="This message needs 9,000 tokens of context"), state=st.FAILED)
    assert panel.state.text() == "Last reply: failed"
    panel.on_turn_finished(ReplyRecord(error="the runtime stopped during this reply"), state=st.INTERRUPTED)
    assert panel.state.text() == "Last reply: interrupted, the runtime stopped"
    stopped_with_the_window = st.Message(id=1, conversation_id="c", position=1, role="assistant", content="Once", state=st.STOPPED)
    panel.show_conversation(stopped_with_the_window)
    assert panel.state.text() == "Last reply: stopped" and panel.speed.text() == "—"
    panel.show_conversation(None)
    assert panel.state.text() == "No reply yet"


def test_no_figure_is_cut_at_any_width_of_the_panel(qtbot, english):
    from PySide6.QtWidgets import QApplication

    panel = MetricsPanel()
    qtbot.addWidget(panel)
    panel.on_turn_finished(finished(every_stat_set(draft_tokens=90, draft_tokens_accepted=68, prompt_tokens_restored=1820, speculation_notice="",
                                                   prompt_tokens=123456, prompt_tokens_evaluated=123456)), METRICS)
    panel.show()
    for width in (panel.minimumWidth(), 270, 330, 500):
        panel.resize(width, 900)
        QApplication.processEvents()
        for key, row in panel._rows.items():
            value, name = row.value, row.name
            if value.wordWrap():  # free text (why speculation was off, the chat template's failure) wraps, whole
                assert value.height() >= value.heightForWidth(value.width()), f"{width} px: {key} is cut"
            else:
                assert value.width() >= value.sizeHint().width() and value.geometry().right() < row.width(), f"{width} px: {key} is cut"
            assert not value.geometry().intersects(name.geometry()), f"{width} px: {key}'s value covers its name"
        rows = sorted(panel._rows.values(), key=lambda r: r.y())
        for above, below in zip(rows, rows[1:]):
            if above.parentWidget() is below.parentWidget() and above.isVisible() and below.isVisible():
                assert above.geometry().bottom() < below.geometry().top() or above.x() != below.x(), f"{width} px: rows overlap"


def test_at_the_default_width_every_figure_stays_beside_its_label(qtbot, english):
    """Seen in the window: "Context used" alone had its value wrapped under the label. At the panel's
    default width, with large figures (a 128k context nearly full, hundreds of drafted tokens), every row
    keeps label and value on one line; only free text (why speculation was off, a failed chat template) may wrap."""
    from PySide6.QtWidgets import QApplication

    from app.metrics.panel import DEFAULT_WIDTH

    panel = MetricsPanel()
    qtbot.addWidget(panel)
    full = MetricsResult(rss_bytes=9 * 2**30, model_id="m", n_ctx=131_072, kv_tokens_used=123_456, kv_bytes_used=3 * 2**30, devices=[])
    panel.on_turn_finished(finished(every_stat_set(draft_tokens=952, draft_tokens_accepted=828, prompt_tokens=12_345, prompt_tokens_reused=12_000,
                                                   prompt_tokens_evaluated=345, completion_tokens=1_500, speculation_notice="")), full)
    panel.resize(DEFAULT_WIDTH, 900)
    panel.show()
    QApplication.processEvents()
    assert panel.value_of("context") == "123,456 / 131,072 tokens"
    sentences = figures.FREE_TEXT_ROWS
    wrapped = [key for key, row in panel._rows.items() if key not in sentences and row.value.y() > 0]
    assert not wrapped, f"values under their label at {DEFAULT_WIDTH} px: {wrapped}"


def test_the_offload_row_says_how_many_layers_are_on_which_device(qtbot, english):
    """The loaded model's ModelLoadResult.offload, as runtime.metrics repeats it: layers, device, and a step-down."""
    on_gpu = OffloadReport(requested=None, layers=28, layers_total=28, reason="all 28 layers fit",
                           devices=[DeviceUse("Apple M2 GPU", "MTL0", 28, memory_total=16 * 2**30, memory_free=10 * 2**30, memory_used=2**30)])
    row = {r.key: r for r in figures.rows(dataclasses.replace(METRICS, offload=on_gpu), None)}["offload"]
    assert (row.label, row.value, row.section) == ("GPU offload", "28/28 layers on Apple M2 GPU", figures.MEMORY)
    stepped = dataclasses.replace(on_gpu, layers=21, stepped_down_from=[28])
    assert figures.offload_row(stepped).value == "21/28 layers on Apple M2 GPU (stepped down from 28)"
    assert figures.offload_row(OffloadReport(None, 0, 31, reason="this build runs on the CPU")).value == "all 31 layers on the CPU"
    assert "offload" not in {r.key for r in figures.rows(METRICS, None)}  # an older runtime: no row rather than a guess
    panel = MetricsPanel()
    qtbot.addWidget(panel)
    panel.on_turn_finished(None, dataclasses.replace(METRICS, offload=on_gpu))
    assert panel.value_of("offload") == "28/28 layers on Apple M2 GPU" and panel.label_of("offload") == "GPU offload"
    assert panel.value_of("gpu:GPU0") == "500.0 MB of 1,000.0 MB"  # and the device's memory beside it


def test_a_thinking_reply_shows_its_thinking_and_its_first_answer_token_beside_its_first_token(qtbot, english):
    thinking = GenerationStats(ttft_ms=120.0, ttfat_ms=12_900.0, completion_tokens=350, reasoning_tokens=320, answer_tokens=30,
                               thinking_ms=12_400.0, decode_tokens_per_s=25.0, total_ms=14_000.0)
    rows = {r.key: r for r in figures.rows(METRICS, thinking)}
    assert (rows["ttft"].value, rows["ttfat"].value, rows["ttfat"].label) == ("120 ms", "12.9 s", "Time to first answer token")
    assert (rows["reasoning"].label, rows["reasoning"].value) == ("Thinking", "320 tokens, 12.4 s")
    assert (rows["answer"].label, rows["answer"].value) == ("Answer", "30 tokens")
    panel = MetricsPanel()
    qtbot.addWidget(panel)
    panel.on_turn_finished(finished(thinking), METRICS)
    keys = [key for _section, key, _label in panel._shown]
    assert keys[keys.index("ttft") + 1] == "ttfat"  # beside the time to the first token, not at the section's end
    assert keys[keys.index("completion") + 1: keys.index("completion") + 3] == ["reasoning", "answer"]
    assert panel.value_of("ttfat") == "12.9 s"
    # A reply that did not think: no thinking rows, and one time to first token.
    panel.on_turn_finished(finished(GenerationStats(ttft_ms=120.0, completion_tokens=30, decode_tokens_per_s=25.0)), METRICS)
    assert panel.value_of("ttfat") is None and panel.value_of("reasoning") is None
    # A reply cut by a full context says so where its tokens are counted.
    cut = {r.key: r for r in figures.rows(METRICS, GenerationStats(completion_tokens=900, context_full=True))}
    assert cut["completion"].value == "900 tokens, context full"
