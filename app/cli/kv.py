"""`lokal kv`: how much the saved conversation states (KV store) take, and clearing them, through the runtime."""

from __future__ import annotations

import argparse
import json
import sys

from runtime.client import RuntimeClient, RuntimeDied
from runtime.protocol import RpcError


def add_parser(sub) -> None:
    p = sub.add_parser("kv", help="size of the saved conversation states; clear them", description="Show or clear the KV states Lokal saves so that conversations reopen without re-reading their history.")
    p.add_argument("action", nargs="?", choices=("info", "clear"), default="info")
    p.add_argument("--json", action="store_true", help="print the runtime's answer as JSON")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        with RuntimeClient() as client:
            client.initialize("lokal-kv")
            if args.action == "clear":
                result = client.call("kv.clear", None, timeout=120)
                text = f"removed {result['removed_files']} saved states, freed {result['freed_bytes'] / 2**20:.1f} MiB"
            else:
                result = client.call("kv.store_info", {"wait_for_writes": False}, timeout=60)
                if not result["enabled"]:
                    text = "the KV store is off (LOKAL_KV_STORE)"
                else:
                    text = (
                        f"{result['entries']} saved states in {result['path']}: "
                        f"{result['disk_bytes'] / 2**20:.1f} MiB of {result['disk_budget_bytes'] / 2**30:.1f} GiB on disk"
                    )
    except (RpcError, RuntimeDied) as exc:
        print(f"lokal: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result) if args.json else text)
    return 0
