"""Record the curated catalog's hub metadata from huggingface.co into tests/data/hub/, then check the catalog.

    .venv/bin/python scripts/refresh_catalog_fixtures.py                     # every entry of runtime/hub/catalog.json
    .venv/bin/python scripts/refresh_catalog_fixtures.py --only Qwen/Qwen3-8B-GGUF --only ggml-org/gemma-3-4b-it-GGUF
    .venv/bin/python scripts/refresh_catalog_fixtures.py --no-tests          # record and check pairs, skip pytest

Run by hand, with network (the tests never reach the hub: they serve these files from the loopback hub).
For each repository it records what the runtime reads from the hub:

- huggingface_hub's model_info with files_metadata: the commit, gated, and every file with its size and
  the sha256 of its LFS pointer (what `hub.quants` and `download.start` see);
- the GGUF header of the catalog's recommended level, read over HTTP ranges as `hub.quants` reads it
  (runtime/hub/remote_gguf.py): the architecture's shape, the tokenizer's kind, special tokens and
  vocabulary size, and a sha256 of the token list (the list itself is too large to keep).

Each file gets "recorded": true and its source. Then every draft pair is checked with the runtime's own
header check on the full headers just read (runtime/speculative/compat.py, token lists included), and
tests/runtime/hub/test_catalog_entries.py runs over the new fixtures. HF_TOKEN or `hf auth login` is used
for gated repositories; HF_ENDPOINT points it at a mirror.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
FIXTURES = ROOT / "tests" / "data" / "hub"

KEPT_GENERAL = ("general.architecture", "general.name", "general.file_type")
KEPT_TOKENIZER = (
    "tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
    "tokenizer.ggml.add_bos_token", "tokenizer.ggml.add_eos_token",
)


def kept_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """What the fixtures keep of a header: the shape the fit needs and the tokenizer the draft check compares,
    without the token lists, merges and chat template (megabytes each)."""
    arch = str(metadata.get("general.architecture", ""))
    out = {k: metadata[k] for k in (*KEPT_GENERAL, *KEPT_TOKENIZER) if k in metadata}
    for key, value in metadata.items():
        if key.startswith(arch + ".") and (isinstance(value, (int, float, bool, str)) or (isinstance(value, list) and len(value) <= 512)):
            out[key] = value
    tokens = metadata.get("tokenizer.ggml.tokens")
    if isinstance(tokens, list):
        out.setdefault(f"{arch}.vocab_size", len(tokens))
    return out


def tokens_sha256(metadata: dict[str, Any]) -> str | None:
    tokens = metadata.get("tokenizer.ggml.tokens")
    return hashlib.sha256("\n".join(map(str, tokens)).encode()).hexdigest() if isinstance(tokens, list) else None


def record(repo: str, quant: str) -> tuple[dict[str, Any], Any]:
    """The fixture of one repository, and the full GGUF header of its recommended level (for the pair check)."""
    from runtime.hub import hf
    from runtime.hub.quants import find_level, group_levels, RemoteFile
    from runtime.hub.remote_gguf import fetch_header

    info = hf.api().model_info(repo, files_metadata=True)
    siblings = []
    for s in info.siblings or []:
        entry: dict[str, Any] = {"rfilename": s.rfilename, "size": int(s.size or (s.lfs.size if s.lfs else 0) or 0)}
        if s.lfs:
            entry["lfs"] = {"sha256": s.lfs.sha256, "size": int(s.lfs.size)}
        siblings.append(entry)
    files = [RemoteFile(s["rfilename"], s["size"], (s.get("lfs") or {}).get("sha256")) for s in siblings]
    level = find_level(group_levels(files), quant)
    header = None
    gguf: dict[str, Any] = {"file": None, "metadata": {}, "tokens_sha256": None}
    if level is not None:
        header, _stream = fetch_header(hf.file_url(repo, level.first.path, info.sha or "main"))
        gguf = {"file": level.first.path, "metadata": kept_metadata(header.metadata), "tokens_sha256": tokens_sha256(header.metadata)}
    today = datetime.date.today().isoformat()
    fixture = {
        "recorded": True,
        "source": f"recorded from {hf.endpoint()} on {today} by scripts/refresh_catalog_fixtures.py: huggingface_hub model_info "
                  f"(files_metadata) and the GGUF header of {gguf['file']} read over HTTP ranges",
        "evidence": None,
        "repo": repo,
        "sha": info.sha,
        "gated": bool(info.gated),
        "siblings": sorted(siblings, key=lambda s: s["rfilename"]),
        "gguf": gguf,
    }
    return fixture, header


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", default=[], metavar="REPO", help="record only this repository (repeatable)")
    parser.add_argument("--no-tests", action="store_true", help="do not run tests/runtime/hub/test_catalog_entries.py afterwards")
    parser.add_argument("--out", type=Path, default=FIXTURES, help=f"where the fixtures go (default: {FIXTURES.relative_to(ROOT)})")
    args = parser.parse_args()

    from runtime.hub import catalog
    from runtime.speculative.compat import incompatibilities

    entries = catalog.load()
    unknown = [r for r in args.only if r not in {e.repo for e in entries}]
    if unknown:
        print(f"not in the catalog: {', '.join(unknown)}", file=sys.stderr)
        return 2
    headers: dict[str, Any] = {}
    failed = []
    args.out.mkdir(parents=True, exist_ok=True)
    for e in entries:
        if args.only and e.repo not in args.only and e.repo not in {x.draft for x in entries if x.repo in args.only}:
            continue
        try:
            fixture, header = record(e.repo, e.quant)
        except Exception as exc:  # one repository that moved or went gated must not hide the others
            failed.append(f"{e.repo}: {type(exc).__name__}: {exc}")
            print(f"FAILED   {e.repo}: {exc}", file=sys.stderr)
            continue
        headers[e.repo] = header
        path = args.out / (e.repo.replace("/", "--") + ".json")
        path.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"recorded {e.repo}: {len(fixture['siblings'])} files, header of {fixture['gguf']['file']}")
    for e in entries:
        if e.draft and headers.get(e.repo) is not None and headers.get(e.draft) is not None:
            reasons = incompatibilities(headers[e.repo], headers[e.draft])
            if reasons:
                failed.append(f"{e.repo} with its draft {e.draft}: {'; '.join(reasons)}")
                print(f"PAIR     {e.repo} + {e.draft}: {'; '.join(reasons)}", file=sys.stderr)
    if not args.no_tests:
        tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "tests/runtime/hub/test_catalog_entries.py"], cwd=ROOT)
        if tests.returncode != 0:
            failed.append("tests/runtime/hub/test_catalog_entries.py failed over the new fixtures")
    if failed:
        print("\n".join(["", "The catalog needs attention:", *failed]), file=sys.stderr)
        return 1
    print("every entry recorded and checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
