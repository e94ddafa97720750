"""`lokal search`, `lokal quants`, `lokal pull`, `lokal models`, `lokal rm`: models from Hugging Face
and on this machine, through the runtime process (which does the network, the fit check and the
downloads), the same way the window does."""

from __future__ import annotations

import argparse
import json
import sys
import threading
from dataclasses import dataclass
from typing import Any

from app.formatting import human_size
from runtime.client import RuntimeClient, RuntimeDied
from runtime.protocol import (
    DownloadIdParams,
    DownloadInfo,
    DownloadStartParams,
    HubQuantsParams,
    HubQuantsResult,
    HubSearchParams,
    ModelsRemoveParams,
    RpcError,
    decode,
    methods,
)

EXIT_ERROR = 1
EXIT_RUNTIME_DIED = 3
EXIT_INTERRUPTED = 130
FIT_LABELS = {"gpu": "fits on GPU", "ram": "fits in RAM", "too_big": "too big", "unknown": "?"}


def add_parsers(sub) -> None:
    p = sub.add_parser("search", help="search Hugging Face for GGUF models (no query: the curated catalog)")
    p.add_argument("query", nargs="?", default="", metavar="QUERY")
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_search)

    p = sub.add_parser("quants", help="a repository's quantization levels, sizes and whether each fits this machine")
    p.add_argument("repo", metavar="REPO")
    p.add_argument("--revision", default="main")
    p.add_argument("--n-ctx", type=int, default=4096, help="context size the fit check assumes (default 4096)")
    p.add_argument("--kv-type", choices=["f16", "q8_0", "q4_0"], default="f16", help="KV cache type (default f16)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_quants)

    p = sub.add_parser("pull", help="download a model (REPO or REPO:QUANT) into the Hugging Face cache")
    p.add_argument("target", metavar="REPO[:QUANT]")
    p.add_argument("--revision", default="main")
    p.add_argument("--no-mmproj", action="store_true", help="a vision model without its multimodal projector (text only)")
    p.set_defaults(run=run_pull)

    p = sub.add_parser("models", help="the models on this machine")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_models)

    p = sub.add_parser("rm", help="delete a model from disk (an id, a path, a file name, or REPO[:QUANT] as `lokal models` shows); "
                                  "a file you added only leaves the list")
    p.add_argument("model", metavar="MODEL")
    p.add_argument("--delete-file", action="store_true", help="for a file you added: delete the file itself too")
    p.add_argument("--keep-file", action="store_true", help=argparse.SUPPRESS)  # the default now; still accepted
    p.set_defaults(run=run_rm)


def _with_runtime(work) -> int:
    try:
        client = RuntimeClient()
    except OSError as exc:
        print(f"lokal: cannot start the runtime: {exc}", file=sys.stderr)
        return EXIT_ERROR
    try:
        client.initialize("lokal-models")
        return work(client)
    except RuntimeDied as exc:
        print(f"lokal: {exc}", file=sys.stderr)
        return EXIT_RUNTIME_DIED
    except RpcError as exc:
        print(f"lokal: {exc.message}", file=sys.stderr)
        return EXIT_ERROR
    finally:
        client.close()




def _dump(obj: Any) -> None:
    import dataclasses

    print(json.dumps(dataclasses.asdict(obj), ensure_ascii=False, indent=1))


# ---- search ------------------------------------------------------------------------

def run_search(args: argparse.Namespace) -> int:
    def work(client: RuntimeClient) -> int:
        if not args.query:
            catalog = client.request(methods.HUB_CATALOG, timeout=30)
            if args.json:
                _dump(catalog)
                return 0
            for e in catalog.entries:
                draft = f"  (draft: {e.draft})" if e.draft else ""
                print(f"{e.repo:<60} {e.params:>9}  {e.kind:<9}  {e.description}{draft}")
            return 0
        result = client.request(methods.HUB_SEARCH, HubSearchParams(args.query, args.limit), timeout=60)
        if args.json:
            _dump(result)
            return 0
        if not result.repos:
            print(f"no GGUF models found for {args.query!r}")
        for r in result.repos:
            gated = "  gated" if r.gated else ""
            print(f"{r.id:<60} {r.downloads:>10} downloads {r.likes:>6} likes{gated}")
        return 0

    return _with_runtime(work)


# ---- quants --------------------------------------------------------------------------

def run_quants(args: argparse.Namespace) -> int:
    def work(client: RuntimeClient) -> int:
        params = HubQuantsParams(args.repo, args.revision, args.n_ctx, args.kv_type, args.kv_type)
        result = client.request(methods.HUB_QUANTS, params, timeout=120)
        if args.json:
            _dump(result)
            return 0
        print_quants(result, args.n_ctx, args.kv_type)
        return 0

    return _with_runtime(work)


def print_quants(result: HubQuantsResult, n_ctx: int, kv_type: str) -> None:
    h = result.header
    if h is not None:
        print(f"{result.repo} @ {result.commit[:10]}: {h.architecture}, {h.n_layers} layers, {h.n_head_kv} KV heads x {h.key_length}/{h.value_length}, "
              f"trained context {h.context_length}, vocabulary {h.vocab_size} ({h.tokenizer_model}/{h.tokenizer_pre})")
        print(f"fit at {n_ctx} tokens of context, {kv_type} KV cache (header read from {result.header_file}: {human_size(result.header_bytes_fetched)} fetched)")
    else:
        print(f"{result.repo} @ {result.commit[:10]}")
    if not result.levels:
        print("no GGUF files in this repository")
    for lv in result.levels:
        parts = f" ({len(lv.files)} parts)" if len(lv.files) > 1 else ""
        label = FIT_LABELS[lv.fit.label] if lv.fit else ""
        need = f"needs {human_size(lv.fit.ram_needed if lv.fit.label != 'gpu' else lv.fit.gpu_needed)}" if lv.fit else ""
        mark = "  [downloaded]" if lv.downloaded else ""
        problem = f"  ! {lv.problem}" if lv.problem else ""
        print(f"  {lv.name:<10} {human_size(lv.size):>9}{parts:<11} {label:<12} {need}{mark}{problem}")


# ---- pull --------------------------------------------------------------------------

def parse_target(target: str) -> tuple[str, str | None]:
    repo, _, quant = target.partition(":")
    if repo.count("/") != 1 or not all(repo.split("/")):
        raise ValueError(f"{target!r}: expected REPO or REPO:QUANT, with REPO as owner/name")
    return repo, quant or None


@dataclass
class _Pull:
    """The download `lokal pull` follows, and its latest progress."""

    id: str | None = None
    last: DownloadInfo | None = None
    waited: bool = False  # another process held the blob's lock at some point


def run_pull(args: argparse.Namespace) -> int:
    try:
        repo, quant = parse_target(args.target)
    except ValueError as exc:
        print(f"lokal: {exc}", file=sys.stderr)
        return EXIT_ERROR
    pull = _Pull()
    finished = threading.Event()
    bar = _ProgressBar()

    def on_notification(method: str, data: Any) -> None:
        if method != methods.DOWNLOAD_PROGRESS.name:
            return
        info = decode(DownloadInfo, data, "params")
        if info.id != pull.id:
            return
        pull.last = info
        if info.state == "waiting" and not pull.waited:
            pull.waited = True
            bar.write(f"waiting: another process is downloading {info.current_file}; this pull goes on once it is done")
        bar.update(info)
        if info.state in ("done", "failed", "cancelled", "paused"):
            finished.set()

    def work(client: RuntimeClient) -> int:
        client.add_notification_handler(on_notification)
        info = client.request(methods.DOWNLOAD_START, DownloadStartParams(repo, quant, revision=args.revision, with_mmproj=not args.no_mmproj), timeout=120)
        pull.id = info.id
        bar.start(info)
        if info.state in ("done",):
            finished.set()
            pull.last = info
        try:
            while not finished.wait(1.0):
                if client.died is not None:
                    raise client.died
        except KeyboardInterrupt:
            client.request(methods.DOWNLOAD_PAUSE, DownloadIdParams(info.id), timeout=30)
            bar.close()
            print(f"paused; run `lokal pull {args.target}` again to resume", file=sys.stderr)
            return EXIT_INTERRUPTED
        bar.close()
        last = pull.last
        assert last is not None  # `finished` is set with it
        if last.state == "done":
            if pull.waited:
                print("done after waiting for another process's download of the same file", file=sys.stderr)
            print("\n".join(last.paths))
            return 0
        print(f"lokal: download {last.state}: {last.error or ''}", file=sys.stderr)
        return EXIT_ERROR

    return _with_runtime(work)


class _ProgressBar:
    """tqdm over the runtime's progress notifications (it is already a dependency of huggingface_hub)."""

    def __init__(self):
        self._bar = None

    def start(self, info: DownloadInfo) -> None:
        from tqdm import tqdm

        self._bar = tqdm(total=info.bytes_total, initial=info.bytes_done, unit="B", unit_scale=True, desc=f"{info.repo}:{info.quant}", file=sys.stderr)

    def update(self, info: DownloadInfo) -> None:
        if self._bar is None:
            return
        self._bar.n = info.bytes_done
        eta = f"{info.eta_s:.0f}s" if info.eta_s is not None else "?"
        self._bar.set_postfix_str(f"{human_size(info.speed)}/s ETA {eta}" + (f" retries {info.attempts}" if info.attempts else ""), refresh=False)
        self._bar.refresh()

    def write(self, line: str) -> None:
        """A line on stderr above the bar."""
        if self._bar is not None:
            self._bar.write(line, file=sys.stderr)
        else:
            print(line, file=sys.stderr)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


# ---- models and rm ----------------------------------------------------------------

def run_models(args: argparse.Namespace) -> int:
    def work(client: RuntimeClient) -> int:
        result = client.request(methods.MODELS_LIST, timeout=60)
        if args.json:
            _dump(result)
            return 0
        if not result.models:
            print("no models yet: `lokal pull REPO[:QUANT]` downloads one")
        for m in result.models:
            problem = f"  ! {m.problem}" if m.problem else ""
            print(f"{m.id}\n    {m.name}  {m.architecture} {m.quantization}  {human_size(m.size)}  context {m.context_length}  [{m.source}]{problem}")
        return 0

    return _with_runtime(work)


def resolve_model(models: list, wanted: str):
    """The one model `wanted` names: an id, a path, a file name, or REPO[:QUANT]."""
    exact = [m for m in models if wanted in (m.id, m.path) or wanted in m.files]
    if exact:
        return exact[0]
    repo, _, quant = wanted.partition(":")
    candidates = [m for m in models if (m.repo == repo and (not quant or m.quantization.upper() == quant.upper() or quant.upper() in m.path.upper()))
                  or m.path.rsplit("/", 1)[-1] == wanted]
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        raise LookupError(f"no local model matches {wanted!r}; `lokal models` lists them")
    raise LookupError(f"{wanted!r} matches {len(candidates)} models; name one by its id:\n" + "\n".join(f"  {m.id}" for m in candidates))


def run_rm(args: argparse.Namespace) -> int:
    def work(client: RuntimeClient) -> int:
        models = client.request(methods.MODELS_LIST, timeout=60).models
        try:
            model = resolve_model(models, args.model)
        except LookupError as exc:
            print(f"lokal: {exc}", file=sys.stderr)
            return EXIT_ERROR
        result = client.request(methods.MODELS_REMOVE, ModelsRemoveParams(model.id, args.delete_file), timeout=60)
        if model.source == "added" and not args.delete_file:
            print(f"removed {model.id} from the list; the file stays at {model.path} (`lokal rm --delete-file` deletes it)")
        else:
            print(f"removed {model.id} ({human_size(result.freed_bytes)} freed)")
        return 0

    return _with_runtime(work)
