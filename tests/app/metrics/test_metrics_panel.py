"""The metrics rows (Qt-free figures) and the panel that renders them."""

from __future__ import annotations

from app.metrics import figures
from app.metrics.panel import MetricsPanel
from runtime.protocol import Device, MetricsResult


def test_metrics_rows_show_unknown_numeric_stats_generically():
    stats = {"ttft_ms": 120.0, "decode_tokens_per_s": 50.0, "prompt_tokens_reused": 10, "prompt_tokens_evaluated": 5,
             "draft_tokens_accepted": 42, "acceptance_rate": 0.75, "kv_restore_source": "disk", "speculation": "lookup",
             "context_dropped_messages": 0, "some_new_figure": 3}
    metrics = MetricsResult(rss_bytes=3 * 2**20, model_id="m", n_ctx=2048, kv_tokens_used=512, kv_bytes_used=2**21,
                            devices=[Device(name="GPU0", type="gpu", memory_total=2**30, memory_free=2**29)])
    rows = {r.key: r for r in figures.rows(metrics, stats)}
    assert rows["context"].value == "512 / 2,048 (25 %)"
    assert rows["kv"].value == "2.0 MB" and rows["rss"].value == "3.0 MB"
    assert rows["gpu:GPU0"].value == "512.0 MB of 1,024.0 MB"
    assert rows["extra:draft_tokens_accepted"].label == "Draft tokens accepted" and rows["extra:draft_tokens_accepted"].value == "42"
    assert rows["extra:acceptance_rate"].value == "75 %"
    assert rows["extra:some_new_figure"].value == "3"
    assert "extra:kv_restore_source" not in rows and "restored" not in rows  # nothing restored this turn
    assert "extra:context_dropped_messages" not in rows  # shown only once messages were dropped
    plain = {r.key for r in figures.rows(metrics, dict(stats, speculation="off"))}
    assert "extra:draft_tokens_accepted" not in plain and "extra:some_new_figure" in plain  # no speculation rows when off


def test_metrics_panel_adds_and_removes_extra_rows(qtbot):
    panel = MetricsPanel()
    qtbot.addWidget(panel)
    panel.on_turn_finished({"decode_tokens_per_s": 12.5, "ttft_ms": 80, "speculative_accepted": 7, "finish_reason": "stop"})
    assert panel.speed.text() == "12.5 tok/s" and panel.value_of("extra:speculative_accepted") == "7"
    panel.on_turn_finished({"decode_tokens_per_s": 10.0, "finish_reason": "stop"})
    assert panel.value_of("extra:speculative_accepted") is None and panel.value_of("ttft") == "…"
