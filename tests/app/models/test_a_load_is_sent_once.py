"""A load already on its way is not sent again when the same load is asked for meanwhile (the model list, come during
the load, works the same choice out again): one model.load, not two."""

from __future__ import annotations

import dataclasses

from window_helpers import wait_loaded


def test_the_same_choice_asked_for_while_it_loads_is_loaded_once(qtbot, window):
    sent = []
    window.session.sig_loading.connect(sent.append)
    before = window.session.wanted
    other = dataclasses.replace(before, n_seq=2)
    window.session.load(other)
    window.session.load(other)
    wait_loaded(qtbot, window)
    assert len(sent) == 1 and window.session.loaded.n_seq == 2
    window.session.load(other)  # held already
    assert len(sent) == 1
