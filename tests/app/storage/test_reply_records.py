"""A reply's record (figures, finish reason, error) is read from the store's `stats` column once, into a
ReplyRecord: rows every earlier Lokal wrote read as before, and a row that cannot be read whole opens
anyway, with a log line naming the message and the field (app/storage/reply_record.py)."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

import pytest

from app.chat import export
from app.storage import store as st
from app.storage.reply_record import ReplyRecord
from app.storage.store import Store
from runtime.protocol import GenerationStats

# What the window stored before ReplyRecord, byte for byte: the runtime's figures with finish_reason beside them
# ({**asdict(stats), "finish_reason": ...}), a remote reply's (the figures its client measured), and a failed reply's.
LOCAL = {**{"prompt_tokens": 31, "prompt_tokens_reused": 0, "prompt_tokens_evaluated": 31, "completion_tokens": 12, "ttft_ms": 41.5,
            "prefill_tokens_per_s": 747.0, "decode_tokens_per_s": 88.2, "total_ms": 180.0, "rss_bytes": 3 << 20,
            "prompt_tokens_restored": 0, "kv_restore_ms": 0.0, "kv_restore_source": "", "kv_restore_saved_ms": 0.0,
            "context_dropped_messages": 0, "chat_template_fallback": "", "speculation": "auto", "speculation_notice": "",
            "draft_tokens": 0, "draft_tokens_accepted": 0, "acceptance_rate": 0.0, "mean_accepted_length": 0.0, "target_passes": 0,
            "tokens_per_target_pass": 0.0, "speedup": 0.0}, "finish_reason": "length"}
REMOTE = {"total_ms": 900.0, "ttft_ms": 120.0, "completion_tokens": 8, "decode_tokens_per_s": 20.0, "prompt_tokens": 14, "finish_reason": "stop"}
FAILED = {"error": "the model ran out of memory"}


def stored(tmp_path: Path, stats_text: str | None) -> tuple[Store, int]:
    """A store with one reply whose `stats` column holds `stats_text` as written by hand (an older Lokal, a damaged row)."""
    path = tmp_path / "c.sqlite3"
    store = Store(path)
    conv = store.create_conversation("t")
    reply = store.add_message(conv.id, "assistant", "an answer")
    with sqlite3.connect(str(path)) as db:
        db.execute("UPDATE messages SET stats = ? WHERE id = ?", (stats_text, reply.id))
    return store, reply.id


def test_rows_written_before_reply_records_read_as_they_were(tmp_path):
    store, message_id = stored(tmp_path, json.dumps(LOCAL))
    record = store.message(message_id).record
    assert record == ReplyRecord(GenerationStats(**{k: v for k, v in LOCAL.items() if k != "finish_reason"}), "length")

    store, message_id = stored(tmp_path / "remote", json.dumps(REMOTE))
    record = store.message(message_id).record
    assert record.finish_reason == "stop" and record.stats.ttft_ms == 120.0 and record.stats.prompt_tokens == 14
    assert record.stats.prefill_tokens_per_s == 0.0  # not measured by a remote client: 0, which the panel shows as unknown

    store, message_id = stored(tmp_path / "failed", json.dumps(FAILED))
    assert store.message(message_id).record == ReplyRecord(None, None, "the model ran out of memory")

    store, message_id = stored(tmp_path / "none", None)
    assert store.message(message_id).record is None


def test_a_record_is_stored_in_the_shape_older_lokals_read(tmp_path):
    path = tmp_path / "c.sqlite3"
    store = Store(path)
    conv = store.create_conversation("t")
    reply = store.add_message(conv.id, "assistant", "", state=st.STREAMING)
    record = ReplyRecord(GenerationStats(**{k: v for k, v in LOCAL.items() if k != "finish_reason"}), "length")
    store.update_message(reply.id, content="an answer", state=st.COMPLETE, record=record)
    with sqlite3.connect(str(path)) as db:
        (text,) = db.execute("SELECT stats FROM messages WHERE id = ?", (reply.id,)).fetchone()
    # Every figure of today's GenerationStats is written: LOCAL's, the per-drafter ones added since (protocol 1.5),
    # the reasoning ones (protocol 1.6), and why speculation was off in figures the window words itself (1.12).
    written = {
        **LOCAL, "lookup_draft_tokens": 0, "lookup_draft_tokens_accepted": 0, "model_draft_tokens": 0, "model_draft_tokens_accepted": 0,
        "reasoning_tokens": 0, "answer_tokens": 0, "thinking_ms": 0.0, "ttfat_ms": 0.0, "context_full": False, "prompt_image_positions": 0,
        "speculation_cannot_rewind": "",
    }
    assert json.loads(text) == written
    assert store.message(reply.id).record == record
    # The JSON export keeps its format (lokal.conversation/1): the same object.
    exported = json.loads(export.to_json(conv, store.messages(conv.id)))
    assert exported["messages"][0]["stats"] == written
    failed = store.add_message(conv.id, "assistant", "", state=st.STREAMING)
    store.update_message(failed.id, state=st.FAILED, record=ReplyRecord(error="the model ran out of memory"))
    with sqlite3.connect(str(path)) as db:
        (text,) = db.execute("SELECT stats FROM messages WHERE id = ?", (failed.id,)).fetchone()
    assert json.loads(text) == FAILED


@pytest.mark.parametrize(
    "text, expected, logged",
    [
        ("{not json", None, "its stored figures are not JSON"),
        ("[1, 2]", None, "its stored figures are a list, not an object"),
        (json.dumps({**REMOTE, "decode_tokens_per_s": "fast"}), ReplyRecord(None, "stop"), "stats.decode_tokens_per_s: expected number, got str"),
        (json.dumps({**REMOTE, "finish_reason": "tired"}), "figures kept", "stored finish_reason 'tired' is not one of"),
        (json.dumps({**FAILED, "error": {"code": 3}}), ReplyRecord(None, None, "{'code': 3}"), "stored error is a dict, not a string"),
    ],
)
def test_a_stored_record_that_cannot_be_read_whole_opens_anyway_and_says_which_field(tmp_path, caplog, text, expected, logged):
    store, message_id = stored(tmp_path, text)
    with caplog.at_level(logging.WARNING, logger="lokal.storage"):
        message = store.message(message_id)
    assert message.content == "an answer"  # the message itself opens
    if expected == "figures kept":
        assert message.record.finish_reason is None and message.record.stats.ttft_ms == 120.0
    else:
        assert message.record == expected
    assert f"message {message_id}: " in caplog.text and logged in caplog.text
    with sqlite3.connect(str(tmp_path / "c.sqlite3")) as db:  # nothing is rewritten: the row keeps what it had
        assert db.execute("SELECT stats FROM messages WHERE id = ?", (message_id,)).fetchone()[0] == text


def test_a_figure_from_a_newer_lokal_is_left_out(tmp_path, caplog):
    store, message_id = stored(tmp_path, json.dumps({**REMOTE, "joules_per_token": 0.3}))
    with caplog.at_level(logging.DEBUG, logger="lokal.storage"):
        record = store.message(message_id).record
    assert record.stats.ttft_ms == 120.0 and record.finish_reason == "stop" and not hasattr(record.stats, "joules_per_token")
    assert "joules_per_token" in caplog.text
