"""The quantization table fits its pane: no horizontal scroll bar under a vision model's levels, whose size cell
also names the projector (it had one: a stretched last column keeps 100 px however little room is left)."""

from __future__ import annotations

from app.catalog.browser import level_table
from app.catalog.table_model import QuantModel
from runtime.protocol.hub import MemoryFit, QuantLevel

GB = 1_000_000_000


def vision_level(name: str, size: int) -> QuantLevel:
    fit = MemoryFit(weights=size, kv_cache=GB // 2, compute=GB // 4, ram_needed=size + 2 * GB, gpu_needed=0, label="ram", detail="")
    return QuantLevel(name, [f"model-{name}.gguf"], size, [None], fit, mmproj="mmproj.gguf", mmproj_size=851 * 1_000_000)


def test_levels_with_a_projector_fit_the_pane_without_a_horizontal_scroll_bar(qtbot, english):
    levels = QuantModel()
    levels.set_rows([vision_level("Q4_K_M", 2_500_000_000), vision_level("Q8_0", 4_100_000_000)])
    view = level_table(levels)
    qtbot.addWidget(view)
    view.resize(507, 450)  # the browser's level pane at its default size (docs/screenshots/catalog.png)
    view.show()
    qtbot.waitExposed(view)

    assert "projector" in levels.data(levels.index(0, 1))
    assert view.horizontalScrollBar().maximum() == 0
    header = view.horizontalHeader()
    assert sum(header.sectionSize(c) for c in range(levels.columnCount())) <= view.viewport().width()
    # every column has a title; the last says whether the level is downloaded, or what is wrong with it
    assert [levels.headerData(c, header.orientation()) for c in range(levels.columnCount())] == ["Level", "Size", "Fit", "Memory needed", "Status"]
