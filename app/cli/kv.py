"""`lokal kv`: how much the saved conversation states (KV store) take, and clearing them, through the runtime."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys

from app.formatting import GIB, MIB
from runtime.client import RuntimeClient, RuntimeDied
from runtime.protocol import KvClearResult, KvStoreInfo, KvStoreInfoParams, RpcError, methods


def add_parser(sub) -> None:
    p = sub.add_parser("kv", help="size of the saved conversation states; clear them", description="Show or clear the KV states Lokal saves so that conversations reopen without re-reading their history.")
    p.add_argument("action", nargs="?", choices=("info", "clear"), default="info")
    p.add_argument("--json", action="store_true", help="print the runtime's answer as JSON")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        with RuntimeClient() as client:
            client.initialize("lokal-kv")
            result: KvClearResult | KvStoreInfo
            if args.action == "clear":
                cleared = client.request(methods.KV_CLEAR, timeout=120)
                result = cleared
                text = f"removed {cleared.removed_files} saved states, freed {cleared.freed_bytes / MIB:.1f} MiB"
            else:
                info = client.request(methods.KV_STORE_INFO, KvStoreInfoParams(wait_for_writes=False), timeout=60)
                result = info
                if not info.enabled:
                    text = "the KV store is off (LOKAL_KV_STORE)"
                else:
                    text = (
                        f"{info.entries} saved states in {info.path}: "
                        f"{info.disk_bytes / MIB:.1f} MiB of {info.disk_budget_bytes / GIB:.1f} GiB on disk"
                    )
    except (RpcError, RuntimeDied) as exc:
        print(f"lokal: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(dataclasses.asdict(result)) if args.json else text)
    return 0
