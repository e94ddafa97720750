"""The model browser and the downloads panel, offscreen, over a real RuntimeLink to a real runtime
that talks to the loopback hub."""

from __future__ import annotations

import os

import pytest
from PySide6.QtCore import Qt

from app.catalog.browser import ModelBrowserDialog
from app.catalog.downloads_panel import DownloadsPanel
from app.catalog.service import CatalogService
from app.runtime_link.link import ConnectionState, RuntimeLink
from sample_repos import SMOL_REPO, hub_env

pytestmark = pytest.mark.slow


@pytest.fixture
def service(qtbot, hub, tmp_path):
    env = {**os.environ, **hub_env(hub, tmp_path)}
    env.pop("HF_TOKEN", None)
    link = RuntimeLink(env=env, auto_restart=False)
    link.start()
    qtbot.waitUntil(lambda: link.state == ConnectionState.READY, timeout=60_000)
    yield CatalogService(link)
    link.close()


def cell(model, row, col, role=Qt.ItemDataRole.DisplayRole):
    return model.data(model.index(row, col), role)


def test_browse_search_see_fit_badges_and_download_with_pause_and_resume(qtbot, service, hub, english):
    dialog = ModelBrowserDialog(service)
    panel = DownloadsPanel(service)
    qtbot.addWidget(dialog)
    qtbot.addWidget(panel)
    dialog.show()

    # The curated catalog first, with draft partners.
    qtbot.waitUntil(lambda: dialog.repos.rowCount() >= 10, timeout=30_000)
    assert any(cell(dialog.repos, r, 3) for r in range(dialog.repos.rowCount()))
    # A partner shows by its catalog name, in one line; its repository is in the cell's tooltip.
    entries = {e.repo: e for e in (dialog.repos.row(r) for r in range(dialog.repos.rowCount()))}
    paired = [e for e in entries.values() if e.draft in entries]
    assert paired
    for entry in paired:
        row = dialog.repos.rows.index(entry)
        assert cell(dialog.repos, row, 3) == entries[entry.draft].name
        assert entry.draft in cell(dialog.repos, row, 3, Qt.ItemDataRole.ToolTipRole)
    assert not dialog.repo_view.wordWrap()

    dialog.search_edit.setText("lokal-test")
    qtbot.keyClick(dialog.search_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: cell(dialog.repos, 0, 0) == SMOL_REPO, timeout=30_000)

    dialog.repo_view.selectRow(0)
    qtbot.waitUntil(lambda: dialog.levels.rowCount() == 3, timeout=60_000)
    assert [cell(dialog.levels, r, 0) for r in range(3)] == ["Q4_1", "Q8_0 (2 parts)", "F32"]
    assert cell(dialog.levels, 0, 2) in ("fits in RAM", "fits on GPU")
    assert cell(dialog.levels, 2, 2) == "too big"
    assert cell(dialog.levels, 2, 2, Qt.ItemDataRole.ForegroundRole).name() == "#b3261e"
    assert "30 layers" in dialog.repo_label.text()

    hub.faults.rate = 30e6
    dialog.level_view.selectRow(0)
    assert dialog.download_button.isEnabled()
    qtbot.mouseClick(dialog.download_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.model.rowCount() == 1 and panel.model.row(0).state == "running" and panel.model.row(0).bytes_done > 0, timeout=30_000)
    assert "/s" in cell(panel.model, 0, 3)

    panel.view.selectRow(0)
    assert panel.pause_button.isEnabled() and not panel.resume_button.isEnabled()
    qtbot.mouseClick(panel.pause_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.model.row(0).state == "paused", timeout=30_000)
    assert panel.resume_button.isEnabled()
    paused_at = panel.model.row(0).bytes_done
    assert 0 < paused_at < panel.model.row(0).bytes_total

    hub.faults.rate = None
    qtbot.mouseClick(panel.resume_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.model.row(0).state == "done", timeout=60_000)
    assert cell(panel.model, 0, 2).startswith("100%")
    qtbot.waitUntil(lambda: cell(dialog.levels, 0, 4) == "downloaded", timeout=60_000)


def test_cancel_from_the_panel_removes_the_row(qtbot, service, hub, english):
    panel = DownloadsPanel(service)
    qtbot.addWidget(panel)
    # With no download, the panel says where one comes from instead of an empty table.
    assert panel.view.isHidden() and not panel.empty.isHidden() and "Browse Hugging Face models" in panel.empty.text()
    hub.faults.rate = 20e6
    service.start_download(SMOL_REPO, "Q8_0")
    qtbot.waitUntil(lambda: panel.model.rowCount() == 1 and panel.model.row(0).state == "running", timeout=30_000)
    assert not panel.view.isHidden() and panel.empty.isHidden()
    panel.view.selectRow(0)
    qtbot.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.model.rowCount() == 0, timeout=30_000)
    assert panel.view.isHidden() and not panel.empty.isHidden()


def test_errors_show_in_the_status_line(qtbot, service):
    dialog = ModelBrowserDialog(service)
    qtbot.addWidget(dialog)
    dialog.show_repo("lokal-test/missing")
    qtbot.waitUntil(lambda: "No repository lokal-test/missing on Hugging Face" in dialog.status.text(), timeout=30_000)  # the window's words


def test_catalog_ui_opens_in_a_main_window_and_announces_finished_downloads(qtbot, service, hub):
    from PySide6.QtWidgets import QMainWindow

    from app.catalog.ui import CatalogUi

    window = QMainWindow()
    qtbot.addWidget(window)
    ui = CatalogUi(service.link, window)
    browser = ui.open_browser()
    assert browser.isVisible() and ui.open_browser() is browser
    with qtbot.waitSignal(ui.sig_model_downloaded, timeout=60_000) as signal:
        ui.service.start_download(SMOL_REPO, "Q4_1")
        dock = ui.show_downloads()
    assert window.dockWidgetArea(dock) == Qt.DockWidgetArea.BottomDockWidgetArea
    [path] = signal.args[0]
    assert path.endswith("SmolLM2-135M-Instruct-Q4_1.gguf") and os.path.exists(path)


def test_the_draft_partner_is_checked_from_both_headers(qtbot, service, hub):
    from sample_repos import DRAFT_REPO, TARGET_REPO

    dialog = ModelBrowserDialog(service)
    qtbot.addWidget(dialog)
    dialog.show_repo(TARGET_REPO, draft=DRAFT_REPO)
    qtbot.waitUntil(lambda: "compatible" in dialog.draft_label.text(), timeout=60_000)
    assert "same tokenizer" in dialog.draft_label.text()
    qtbot.waitUntil(lambda: dialog.levels.rowCount() == 1, timeout=60_000)
    assert "with the draft model" in dialog.levels.row(0).fit.detail, "the fit counts the partner it would load with"
    dialog.show_repo(TARGET_REPO, draft=SMOL_REPO)
    qtbot.waitUntil(lambda: "does not match" in dialog.draft_label.text(), timeout=60_000)
    assert "the vocabularies differ in size" in dialog.draft_label.text()
    # A partner that does not match is never loaded with it: the fit is asked again for the model alone.
    qtbot.waitUntil(lambda: dialog.levels.rowCount() == 1 and "draft model" not in dialog.levels.row(0).fit.detail, timeout=60_000)
    assert not dialog.download_with_draft_button.isVisibleTo(dialog)


def test_the_catalog_marks_vision_and_embedding_models_and_filters_by_kind(qtbot, service, hub, english):
    from sample_repos import VISION_MMPROJ, VISION_REPO

    dialog = ModelBrowserDialog(service)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.repos.rowCount() >= 30, timeout=30_000)
    rows = {dialog.repos.row(r).repo: r for r in range(dialog.repos.rowCount())}
    gemma, bge, qwen = rows["ggml-org/gemma-3-4b-it-GGUF"], rows["ggml-org/bge-small-en-v1.5-Q8_0-GGUF"], rows["Qwen/Qwen3-8B-GGUF"]
    assert (cell(dialog.repos, gemma, 1), cell(dialog.repos, bge, 1), cell(dialog.repos, qwen, 1)) == ("vision", "embedding", "reasoning")
    assert cell(dialog.repos, gemma, 1, Qt.ItemDataRole.ForegroundRole).name() == "#7b3fa0"
    assert "mmproj-model-f16.gguf is downloaded with any level" in cell(dialog.repos, gemma, 0, Qt.ItemDataRole.ToolTipRole)
    assert "does not chat" in cell(dialog.repos, bge, 0, Qt.ItemDataRole.ToolTipRole)
    assert "Thinks before it answers" in cell(dialog.repos, qwen, 0, Qt.ItemDataRole.ToolTipRole)

    dialog.kind_filter.setCurrentIndex(dialog.kind_filter.findData("vision"))
    shown = [dialog.repos.row(r) for r in range(dialog.repos.rowCount())]
    assert len(shown) >= 5 and all(e.kind == "vision" and e.mmproj for e in shown)
    dialog.kind_filter.setCurrentIndex(dialog.kind_filter.findData("embedding"))
    assert {dialog.repos.row(r).kind for r in range(dialog.repos.rowCount())} == {"embedding"}
    dialog.kind_filter.setCurrentIndex(0)
    assert dialog.repos.rowCount() == len(rows)

    # A vision repository's level says the projector that comes with it, and its fit counts it.
    dialog.show_repo(VISION_REPO)
    qtbot.waitUntil(lambda: dialog.levels.rowCount() == 1, timeout=60_000)
    assert cell(dialog.levels, 0, 1).endswith("projector") and " + " in cell(dialog.levels, 0, 1)
    assert VISION_MMPROJ in cell(dialog.levels, 0, 2, Qt.ItemDataRole.ToolTipRole)
