"""Restore time of one conversation's KV state saved whole against the same state saved as a base and parts.

In process, on the starter model by default (any GGUF with --model): a sequence is
filled with --tokens tokens, saved as a whole state in one store, and as a base
followed by --parts parts of --part-tokens tokens each (what that many turns save
now) in another. Then each is restored into another sequence --repeats times, from
disk (a fresh store each time, no RAM budget: read, checksum, llama_state_seq_set_data)
and from RAM, and the medians are printed. The parts' restore must cost about what
the whole state's does (issue #28: restore time unchanged). bench/kv_restore.py
measures the restore inside the runtime, against a cold prefill.

    .venv/bin/python bench/kv_restore_chain.py [--model PATH] [--tokens 1804] [--parts 15] [--part-tokens 44] [--repeats 5] [--threads 2]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from runtime.llama.llama_model import LlamaModel, LoadSettings  # noqa: E402
from runtime.gguf.reader import read_file_header  # noqa: E402
from runtime.kvstore import seq_state  # noqa: E402
from runtime.kvstore.store import MAX_PARTS, StateStore  # noqa: E402

from report import publish  # noqa: E402

TAG = {"bench": "kv_restore_chain"}
TEXT = "The lighthouse keeper wrote in his log every night, and the sea answered with its own slow grammar. "


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="GGUF file (default: the starter model)")
    parser.add_argument("--tokens", type=int, default=1804)
    parser.add_argument("--parts", type=int, default=MAX_PARTS - 1, help="parts after the base (a chain has fewer than MAX_PARTS single parts)")
    parser.add_argument("--part-tokens", type=int, default=44)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    from runtime.models import wheels

    path = args.model or str(wheels.path_of(wheels.STARTER))
    model = LlamaModel(LoadSettings(path=path, n_ctx=args.tokens + 64, n_gpu_layers=0, type_k="f16", type_v="f16", flash_attn=None, n_threads=args.threads, n_seq=2), read_file_header(path))
    tokens = model.tokenize(TEXT * (args.tokens // 10), add_bos=True)[: args.tokens]
    seq, target = model.sequences
    work = Path(tempfile.mkdtemp(prefix="lokal-bench-kv-chain-"))
    try:
        whole, chain = StateStore(work / "whole"), StateStore(work / "chain", max_parts=args.parts + 2)
        base = len(tokens) - args.parts * args.part_tokens
        seq.decode_all(tokens[:base])
        chain.put("c", TAG, np.asarray(seq.tokens, dtype=np.int32), seq_state.copy_out(seq))
        for _ in range(args.parts):
            start = len(seq.tokens)
            seq.decode(tokens[start : start + args.part_tokens])
            assert chain.append("c", TAG, start, np.asarray(seq.tokens, dtype=np.int32), seq_state.copy_out(seq, start))
        whole.put("w", TAG, np.asarray(seq.tokens, dtype=np.int32), seq_state.copy_out(seq))
        assert whole.flush(120) and chain.flush(120)
        prompt = np.asarray(tokens, dtype=np.int32)

        def restore(store: StateStore) -> float:
            started = time.perf_counter()
            match = store.best_match(TAG, prompt)
            assert match is not None
            loaded = store.load(match.entry)
            assert loaded is not None and seq_state.copy_in(target, loaded.tokens, loaded.segments)
            assert len(target.tokens) == len(tokens)
            return (time.perf_counter() - started) * 1000

        report: dict = {"model": Path(path).name, "tokens": len(tokens), "parts": args.parts, "part_tokens": args.part_tokens, "threads": args.threads}
        for name, folder in (("whole", "whole"), ("base_and_parts", "chain")):
            disk, ram = [], []
            for _ in range(args.repeats):
                disk.append(restore(StateStore(work / folder, ram_budget=0)))
                held = StateStore(work / folder)
                restore(held)
                ram.append(restore(held))
            report[name] = {
                "files": len(list((work / folder).glob("*.kvs"))),
                "disk_ms": round(statistics.median(disk), 1), "ram_ms": round(statistics.median(ram), 1),
                "disk_ms_runs": [round(x, 1) for x in disk], "ram_ms_runs": [round(x, 1) for x in ram],
            }
        report["parts_over_whole_disk"] = round(report["base_and_parts"]["disk_ms"] / report["whole"]["disk_ms"], 3)
        report["parts_over_whole_ram"] = round(report["base_and_parts"]["ram_ms"] / report["whole"]["ram_ms"], 3)
        publish(report)
    finally:
        model.close()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
