"""The frozen app's entry point: the same `lokal` command, as one executable that needs no Python."""

import multiprocessing
import sys

if __name__ == "__main__":
    # A frozen program that (or whose libraries) starts multiprocessing children must let
    # them through here, before anything else runs, or each child starts another app.
    multiprocessing.freeze_support()
    from app.cli import main

    sys.exit(main())
