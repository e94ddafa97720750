"""A picture reaching a model that can see, from the window: the real window, runtime process and starter model, offscreen.

The starter model and the test projector (tests/vision_files.py: random weights, the starter model's width)
are put where the runtime's model list pairs a projector with its model: one Hugging Face snapshot, as a
vision model's level is downloaded with its projector (runtime/models/local.py, LocalModel.mmproj). Once
the list says so, the window's load sends the projector (ModelLoadParams.mmproj_path), the loaded model says
it can see (ModelLoadResult.vision), the composer offers pictures, and a message with a picture gets a reply
whose prompt counts the picture's positions. Without the pairing, the same window refuses pictures as before.
Replies are noise by construction (random weights): what the model says about the picture is not checked.
"""

from __future__ import annotations

import shutil

import pytest

from app.attachments import kinds
from vision_files import IMAGE_TOKENS, png, vision_snapshot
from waiting import qt_wait_until
from window_helpers import LOAD_MS, REPLY_MS, close_shared_window, open_shared_window

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def hf_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("seeing") / "hf-cache"


@pytest.fixture(scope="module")
def module_window(qapp, starter_model, hf_cache):
    """tests/app/conftest.py's shared window, with a Hugging Face cache this module knows: its runtime lists models there."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_CACHE", str(hf_cache))
        window = open_shared_window(hf_cache.parent / "conversations.sqlite3", starter_model)
        yield window
        close_shared_window(window)


def settled(window, vision: bool) -> None:
    qt_wait_until(
        lambda: window.session.loaded is not None and window.session.loaded.vision == vision and not window.session.busy and not window.link.jobs,
        LOAD_MS / 1000, f"the starter model loaded {'with' if vision else 'without'} its projector",
    )


@pytest.fixture
def paired(win, starter_model, hf_cache):
    """The starter model as a downloaded vision model: its file and a projector in one snapshot of the window's
    Hugging Face cache. The list is asked again (as when a download ends); after the test, both go and the model
    loads again without the projector."""
    model, projector = vision_snapshot(hf_cache, starter_model)
    win.local_models.scan()
    settled(win, True)
    yield projector
    shutil.rmtree(model.parents[2])
    win.local_models.scan()
    settled(win, False)


def test_a_vision_model_chosen_in_the_window_loads_its_projector_and_a_picture_reaches_it(win, paired, tmp_path):
    assert win.session.wanted.mmproj_path == str(paired) and win.session.wanted.params().mmproj_path == str(paired)
    assert win.session.loaded.vision and win.attacher.vision
    dialog = win.composer.choose_files()
    assert any(f.startswith("Pictures (") for f in dialog.nameFilters())  # the attach button offers pictures
    dialog.reject()

    picture = tmp_path / "harbour.png"
    picture.write_bytes(png(40, 30))
    assert win.attacher.add_path(str(picture)), win.banner_text.text()
    qt_wait_until(lambda: len(win.attacher.pending.items) == 1 and not win.attacher.pending.reading, 60, "the picture read by the runtime")
    win.composer.edit.setPlainText("What is in this picture?")
    win.composer.button.click()
    qt_wait_until(lambda: not win.chat.any_generating, REPLY_MS / 1000, "the reply about the picture")
    question, reply = win.chat.messages.messages[-2:]
    assert [a.kind for a in question.attachments] == ["image"]
    assert reply.role == "assistant" and reply.record is not None and reply.record.stats is not None, reply
    assert reply.record.stats.prompt_image_positions == IMAGE_TOKENS
    qt_wait_until(lambda: (win.metrics_panel.value_of("prompt") or "").endswith(f"{IMAGE_TOKENS} of them pictures"), 10, "the panel's prompt figure")


def test_a_model_without_a_projector_still_refuses_pictures_with_the_same_message(win, tmp_path):
    settled(win, False)
    assert win.session.wanted.mmproj_path is None and not win.attacher.vision
    dialog = win.composer.choose_files()
    assert not any("Pictures" in f for f in dialog.nameFilters())
    dialog.reject()
    picture = tmp_path / "cat.png"
    picture.write_bytes(png(8, 8))
    assert not win.attacher.add_path(str(picture))
    assert win.banner.isVisible() and "cat.png" in win.banner_text.text()
    assert kinds.no_vision_reason(win.session.display_name) in win.banner_text.text()


def test_the_vision_model_the_window_opens_with_loads_once_with_its_projector(qapp, tmp_path, starter_model):
    """The model chosen last loads as the window opens, before the model list has come: its projector is found by the
    list's own rule (runtime/models/local.py projector_for), so the list's arrival does not load it a second time."""
    from runtime.hub.cache_folder import cache_dir

    model, projector = vision_snapshot(cache_dir(), starter_model, revision="1" * 40)  # tests/app/conftest.py: this test's own cache
    from app.main import create_main_window

    window = create_main_window(store_path=tmp_path / "conversations.sqlite3", autoload=False)
    window.show()
    try:
        sent = []
        window.session.sig_loading.connect(lambda _path: sent.append(window.session.loading.mmproj_path))
        window.store.set_state("model_path", str(model))
        window.startup.start()  # what the window does as it opens (autoload)
        qt_wait_until(lambda: not window.local_models.scanning and bool(window.local_models.files), 60, "the model list")
        settled(window, True)
        assert sent == [str(projector)]
    finally:
        close_shared_window(window)
