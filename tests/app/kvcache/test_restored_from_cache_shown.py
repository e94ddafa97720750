"""Saved KV states in the window: a restored turn says so and what it saved; the store's size is shown and can be cleared."""

from __future__ import annotations

import pytest

from window_helpers import open_window, wait_reply

pytestmark = pytest.mark.slow

QUESTION = "Here is a list of fruits: apple, banana, cherry, date, elderberry, fig, grape, honeydew, kiwi, lemon, mango. Which one is yellow?"


def test_a_restored_turn_shows_restored_from_cache_and_the_time_saved(qtbot, starter_model, store_path, tmp_path, monkeypatch):
    monkeypatch.setenv("LOKAL_CACHE_DIR", str(tmp_path / "cache"))  # an empty KV store of this test's own
    monkeypatch.setenv("LOKAL_KV_MIN_TOKENS", "16")
    first = open_window(qtbot, store_path, starter_model)
    first.chat.send(QUESTION)
    wait_reply(qtbot, first)
    assert first.metrics_panel.value_of("restored") is None  # nothing was restored for a first turn
    first.shutdown()  # the runtime finishes writing the state before it exits
    first.close()

    second = open_window(qtbot, store_path, starter_model)
    try:
        second.chat.send("And which one is green?")
        wait_reply(qtbot, second)
        stats = second.chat.messages.messages[-1].record.stats
        assert stats.kv_restore_source == "disk" and stats.prompt_tokens_restored > 0 and stats.kv_restore_saved_ms > 0
        panel = second.metrics_panel
        assert panel.value_of("restored").startswith(f"{stats.prompt_tokens_restored:,} tokens (disk, ")
        assert panel.value_of("restore_saved").startswith("≈ ")
        assert panel.value_of("accepted") is None and not panel.section_visible("speculation")  # it did not draft: no column of zeros
        footer = second.chat_view.widgets[-1].footer.text()
        assert "restored from cache, saved ≈ " in footer
        check_the_store_dialog_shows_and_clears(qtbot, second, tmp_path / "cache" / "kv")
    finally:
        second.shutdown()


def check_the_store_dialog_shows_and_clears(qtbot, window, kv_dir):
    from runtime.protocol import KvStoreInfoParams, methods

    # The last reply's state is written after the reply ends: the files listed below are all there is.
    written = []
    window.link.call(methods.KV_STORE_INFO, KvStoreInfoParams(wait_for_writes=True), written.append, timeout_ms=60_000)
    qtbot.waitUntil(lambda: bool(written), timeout=60_000)
    assert written[0].pending_writes == 0
    feature = window.features["kvcache"]
    assert feature.action.shortcut().toString() == "Ctrl+Shift+K"
    dialog = feature.open_dialog()
    qtbot.waitUntil(lambda: dialog.info is not None, timeout=10_000)
    assert dialog.value_of("Conversations saved") == "1"
    assert dialog.value_of("On disk").endswith(" of 5.4 GB") and not dialog.value_of("On disk").startswith("0 B")
    assert dialog.value_of("Folder") == str(kv_dir)
    files = list(kv_dir.glob("*.kvs"))  # one conversation: its whole state, and a part for each later turn saved
    assert dialog.clear_button.isEnabled() and files
    dialog.clear()  # what "Clear all…" does once the user said yes
    qtbot.waitUntil(lambda: dialog.value_of("Conversations saved") == "0", timeout=10_000)
    said = "Removed 1 file, " if len(files) == 1 else f"Removed {len(files)} files, "
    assert dialog.status.text().startswith(said) and not dialog.clear_button.isEnabled() and not list(kv_dir.glob("*.kvs"))
    assert not list(kv_dir.glob("*.kvs"))


def test_a_store_that_is_off_says_so():
    from app.kvcache.dialog import describe
    from runtime.protocol import KvStoreInfo

    assert describe(KvStoreInfo(False, "", 0, 0, 0, 0, 0, 0)) == {"Status": ("Status", "off (LOKAL_KV_STORE=off): conversations are not saved")}
