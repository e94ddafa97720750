"""Presets: what they may hold, their store, the built-in ones, and JSON files in and out (with bad ones refused)."""

from __future__ import annotations

import json
import sqlite3

import pytest

from app.presets.builtin import builtin_presets, find_builtin
from app.presets.preset import MAX_FILE_BYTES, Preset, PresetError, Sampling, from_file_bytes, preset_from, to_file_text
from app.presets.store import PresetStore
from app.storage.store import MIGRATIONS, SCHEMA_VERSION, Store
from runtime.models.load_settings import LoadSettings


@pytest.fixture
def presets(store_path):
    Store(store_path).close()
    store = PresetStore(store_path)
    yield store
    store.close()


REVIEWER = Preset("Python reviewer", "Review Python code.", Sampling(temperature=0.2, max_tokens=400), "/models/coder.gguf", LoadSettings(n_ctx=8192, gpu_offload="all"))


def test_a_preset_is_stored_found_by_name_in_any_case_and_deleted(presets):
    presets.save(REVIEWER)
    assert presets.find("python REVIEWER") == REVIEWER
    assert presets.user_presets() == [REVIEWER]
    assert [p.name for p in presets.all()][-1] == "Python reviewer"
    with pytest.raises(PresetError, match="exists already"):
        presets.save(Preset("python reviewer"))
    presets.save(Preset("Python reviewer", "Shorter."), replace=True)
    assert presets.find("Python reviewer").system_prompt == "Shorter."
    assert presets.delete("Python reviewer") and presets.find("Python reviewer") is None


def test_a_built_in_preset_cannot_be_overwritten_and_is_found_by_key_or_name(presets):
    with pytest.raises(PresetError, match="built-in preset"):
        presets.save(Preset("Code reviewer", "mine"))
    assert find_builtin("code-reviewer").name == "Code reviewer"
    assert find_builtin("TRANSLATOR English ↔ Indonesian").builtin == "translator"
    assert len(builtin_presets()) >= 4
    for preset in builtin_presets():
        assert preset.system_prompt and preset.sampling.given()  # each sets something
        assert preset_from(preset.to_json()).sampling == preset.sampling


def test_built_in_presets_come_in_the_window_language(qapp):
    from app.ui import language

    english = {p.builtin: (p.name, p.system_prompt) for p in builtin_presets()}
    assert language.install("id") == "id"
    try:
        indonesian = {p.builtin: (p.name, p.system_prompt) for p in builtin_presets()}
        assert find_builtin(indonesian["translator"][0]).builtin == "translator"  # the translated name finds it too
        assert find_builtin("Translator English ↔ Indonesian").builtin == "translator"  # and the English one
    finally:
        language.install("en")
    for key, (name, prompt) in english.items():
        assert indonesian[key][0] != name and indonesian[key][1] != prompt, key


def test_export_then_import_gives_the_same_presets_and_a_second_import_skips_them(presets, tmp_path):
    presets.save(REVIEWER)
    text = to_file_text(presets.user_presets())
    data = json.loads(text)
    assert data["lokal_presets"] == 1 and data["presets"][0]["sampling"] == {"temperature": 0.2, "max_tokens": 400}
    presets.delete(REVIEWER.name)

    summary = presets.import_presets(from_file_bytes(text.encode()))
    assert summary.added == ["Python reviewer"] and presets.user_presets() == [REVIEWER]
    again = presets.import_presets(from_file_bytes(text.encode()))
    assert again.skipped == ["Python reviewer"] and not again.added and not again.renamed
    assert len(presets.user_presets()) == 1

    changed = json.loads(text)
    changed["presets"][0]["system_prompt"] = "Something else."
    changed["presets"].append({"name": "Code reviewer", "system_prompt": "mine"})  # a built-in one's name
    third = presets.import_presets(from_file_bytes(json.dumps(changed).encode()))
    assert third.renamed == {"Python reviewer": "Python reviewer (2)", "Code reviewer": "Code reviewer (2)"}
    assert presets.find("Python reviewer (2)").system_prompt == "Something else."


def _file(**preset) -> bytes:
    return json.dumps({"lokal_presets": 1, "presets": [{"name": "P", **preset}]}).encode()


@pytest.mark.parametrize("raw, error", [
    (b"\xff\xfe", "not UTF-8"),
    (b"{not json", "not JSON"),
    (b"[]", 'no "lokal_presets" field'),
    (b'{"lokal_presets": 9, "presets": []}', "version 9"),
    (b'{"lokal_presets": 1, "presets": {}}', "presets: not a list"),
    (b'{"lokal_presets": 1, "presets": [7]}', r"presets\[0\]: not an object"),
    (_file(sampling={"temperature": 3.5}), r"presets\[0\].sampling.temperature: 3.5 is not between 0 and 2"),
    (_file(sampling={"temperature": "hot"}), r"presets\[0\].sampling.temperature: 'hot' is not a number"),
    (_file(sampling={"top_p": 0}), r"presets\[0\].sampling.top_p"),
    (_file(sampling={"max_tokens": 0}), r"presets\[0\].sampling.max_tokens: 0 is not a whole number of at least 1"),
    (_file(sampling={"max_tokens": True}), r"presets\[0\].sampling.max_tokens"),
    (_file(sampling={"warmth": 1}), r"presets\[0\].sampling: unknown setting\(s\) warmth"),
    (_file(sampling=[1]), r"presets\[0\].sampling: not an object"),
    (_file(colour="red"), r"presets\[0\]: unknown field\(s\) colour"),
    (_file(name=""), r"presets\[0\].name: a preset needs a name"),
    (_file(system_prompt=5), r"presets\[0\].system_prompt: not text"),
    (_file(load_settings={"n_ctx": 8192}), r"presets\[0\].load_settings: load settings need the model"),
    (_file(model="/m.gguf", load_settings={"n_ctx": 3}), r"presets\[0\].load_settings.n_ctx: 3 is not a whole number of at least 256"),
    (_file(model="/m.gguf", load_settings={"gpu_offload": "lots"}), r"presets\[0\].load_settings.gpu_offload"),
    (_file(model="/m.gguf", load_settings={"turbo": True}), r"presets\[0\].load_settings: unknown setting\(s\) turbo"),
    (b'{"lokal_presets": 1, "presets": [{"name": "A"}, {"name": "a"}]}', r"presets\[1\].name: 'a' is the name of presets\[0\] too"),
    (b"[" * 100_000 + b"]" * 100_000, "nests too deeply|not JSON|no \"lokal_presets\""),
    (b" " * (MAX_FILE_BYTES + 1), "at most 1024 KiB"),
])
def test_a_bad_file_is_refused_with_an_error_that_names_what_is_wrong_and_imports_nothing(presets, raw, error):
    with pytest.raises(PresetError, match=error):
        presets.import_presets(from_file_bytes(raw))
    assert presets.user_presets() == []


def test_a_file_with_one_bad_preset_imports_none_of_the_good_ones(presets):
    raw = json.dumps({"lokal_presets": 1, "presets": [{"name": "Good"}, {"name": "Bad", "sampling": {"seed": -1}}]}).encode()
    with pytest.raises(PresetError, match=r"presets\[1\].sampling.seed"):
        presets.import_presets(from_file_bytes(raw))
    assert presets.user_presets() == []


def test_a_stored_row_changed_by_hand_gives_an_error_naming_the_preset(presets, store_path):
    presets.save(Preset("Mine", sampling=Sampling(temperature=0.5)))
    with sqlite3.connect(str(store_path)) as db:
        db.execute("UPDATE presets SET sampling = '{\"temperature\": 9}' WHERE name = 'Mine'")
    db.close()
    with pytest.raises(PresetError, match=r"stored preset 'Mine'.sampling.temperature: 9"):
        presets.user_presets()


def test_the_presets_table_comes_with_a_migration_that_keeps_every_conversation(store_path):
    with sqlite3.connect(str(store_path)) as db:  # the released schema (version 2), a conversation in it
        for version, script in enumerate(MIGRATIONS[:2], start=1):
            db.executescript(f"BEGIN;\n{script}\nPRAGMA user_version = {version};\nCOMMIT;")
        db.execute("INSERT INTO conversations (id, title, created_at, updated_at) VALUES ('c1', 'Kept', 1, 1)")
        db.execute("INSERT INTO messages (conversation_id, position, role, content, created_at) VALUES ('c1', 0, 'user', 'hello', 1)")
    db.close()
    store = Store(store_path)
    assert store.schema_version == SCHEMA_VERSION
    assert [c.title for c in store.conversations()] == ["Kept"] and store.messages("c1")[0].content == "hello"
    store.close()
    presets = PresetStore(store_path)
    presets.save(Preset("After the migration"))
    assert presets.find("after the migration") is not None
    presets.close()
