"""The saved KV states (kv.store_info, kv.clear)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class KvStoreInfoParams:
    # Wait (up to 30 s) until the last reply's after-work is done (its next turn's header read, its state copied
    # out; with the store off too) and every queued write is on disk.
    # It blocks the runtime's reader meanwhile: for tools and tests, not for a window that polls.
    wait_for_writes: bool = False


@dataclass
class KvStoreInfo:
    """`kv.store_info`: the saved KV states (conversations that stay warm)."""

    enabled: bool
    path: str
    entries: int
    disk_bytes: int
    disk_budget_bytes: int
    ram_bytes: int
    ram_budget_bytes: int
    pending_writes: int


@dataclass
class KvClearResult:
    removed_files: int
    freed_bytes: int
