"""Sizes as the user reads them: "MB" is 10^6 bytes wherever the window or the command line says it."""

from __future__ import annotations

from app.formatting import MB, MIB, human_size
from app.metrics import figures


def test_mb_is_a_million_bytes_in_the_metrics_panel_and_in_file_sizes(english):
    assert MB == 1_000_000 and MIB == 2**20
    assert figures.mb(1_500_000) == "1.5 MB"  # the panel's KV cache, process memory and GPU memory
    assert human_size(1_500_000) == "1.5 MB"  # downloads, model files, saved states
