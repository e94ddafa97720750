"""A load already on its way is not sent again when the same load is asked for meanwhile (the model list, come during
the load, works the same choice out again): one model.load, not two."""

from __future__ import annotations

import dataclasses

from window_helpers import wait_loaded


def test_the_same_choice_asked_for_while_it_loads_is_loaded_once(qtbot, window, english):
    # The window's first load may be worked out again once the model list comes (a draft for "auto", say): after that.
    qtbot.waitUntil(lambda: bool(window.local_models.files) and not window.local_models.scanning, timeout=60_000)
    wait_loaded(qtbot, window)
    sent = []
    window.session.sig_loading.connect(sent.append)
    before = window.session.wanted
    n_seq = 3 if before.n_seq == 2 else 2  # another test of this worker may have stored load settings for the starter model
    other = dataclasses.replace(before, n_seq=n_seq)
    window.session.load(other)
    window.session.load(other)
    wait_loaded(qtbot, window)
    assert len(sent) == 1 and window.session.loaded.n_seq == n_seq
    qtbot.waitUntil(lambda: window.metrics_panel.value_of("parallel") == f"{n_seq} conversations", timeout=10_000)  # all that was asked fit
    window.session.load(other)  # held already
    assert len(sent) == 1
