"""The window's extension points: the Model menu built from the sections model sources add."""

from __future__ import annotations

from app.ui.menus import ModelMenu


def texts(menu):
    return [a.text() for a in menu.actions() if not a.isSeparator() or a.text()]


def test_sections_appear_by_order_and_are_rebuilt_not_repeated(qtbot):
    menu = ModelMenu("&Model")
    items = ["a"]
    menu.add_section("remote", lambda s: [s.add_heading("Remote"), s.add_action("Add remote endpoint…", lambda: None)], order=20)
    menu.add_section("local", lambda s: [s.add_model(name, False, lambda: None) for name in items], order=0)
    assert texts(menu) == ["a", "Remote", "Add remote endpoint…"]
    items.append("b")
    menu.aboutToShow.emit()
    assert texts(menu) == ["a", "b", "Remote", "Add remote endpoint…"]
    menu.add_section("local", lambda s: s.add_note("No GGUF files found yet"), order=0)  # replaced, not added twice
    assert texts(menu) == ["No GGUF files found yet", "Remote", "Add remote endpoint…"]


def test_choosing_a_model_runs_its_source_and_says_which_section_it_was(qtbot):
    menu = ModelMenu("&Model")
    chosen = []
    menu.add_section("local", lambda s: s.add_model("Q4_1", True, lambda: chosen.append("local")), order=0)
    menu.add_section("remote", lambda s: s.add_model("gpt", False, lambda: chosen.append("remote")), order=20)
    q4, gpt = [a for a in menu.actions() if a.isCheckable()]
    assert q4.isChecked() and not gpt.isChecked()
    with qtbot.waitSignal(menu.sig_model_chosen) as signal:
        gpt.trigger()
    assert chosen == ["remote"] and signal.args == ["remote"]
    assert q4.isChecked() and gpt.isChecked()  # each section's own choice: local and remote are not one group


def test_a_rebuild_asked_for_by_the_entry_being_triggered_waits_until_it_returns(qtbot):
    menu = ModelMenu("&Model")
    builds = []

    def build(section):
        builds.append(1)
        section.add_model("Q4_1", False, menu.rebuild)  # e.g. a source whose list changes when a model is chosen

    menu.add_section("local", build, order=0)
    entry = next(a for a in menu.actions() if a.isCheckable())
    before = len(builds)
    entry.trigger()
    assert len(builds) == before  # not while the entry's own slot runs: clearing would delete it under it
    qtbot.waitUntil(lambda: len(builds) == before + 1, timeout=5_000)
