"""The runtime's one dispatch table: each method's handler, keyed by its typed handle (runtime.protocol.methods).

Registering is checked by mypy: `handle(methods.KV_CLEAR, fn)` needs an `fn` that takes the method's
params dataclass and returns its result dataclass, so a handler cannot drift from the protocol it
answers. Jobs (the engine and batch lanes, run in the job slot) also get their Job and where a reply's
text goes. `missing()` names any method with no handler: the server refuses to start with a gap, and
a test checks the table against every method the protocol declares.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Callable, TypeVar, Union

from runtime.job_slot import Job
from runtime.protocol import Lane, Method, TokenLogprob, methods

P = TypeVar("P")
R = TypeVar("R")

OnText = Callable[[str, str, list[TokenLogprob]], None]  # a reply's streamed (answer, reasoning, the answer's log-probabilities)
JOB_LANES = (Lane.ENGINE, Lane.BATCH)
# The request a pool-lane handler is answering (set around the call in the pool's thread): a handler that says
# how far it got (attachment.progress) names it, so the client knows which of its requests the notification is about.
ANSWERING: ContextVar[Union[int, str, None]] = ContextVar("answering", default=None)


class DispatchTable:
    def __init__(self) -> None:
        self._handlers: dict[Method[Any, Any], Callable[..., Any]] = {}

    def handle(self, method: Method[P, R], handler: Callable[[P], R]) -> None:
        """`handler(params)` answers `method` (the immediate and pool lanes)."""
        if method.lane in JOB_LANES:
            raise ValueError(f"{method.name} runs in the job slot: register it with handle_job")
        self._add(method, handler)

    def handle_job(self, method: Method[P, R], handler: Callable[[P, Job, OnText | None], R]) -> None:
        """`handler(params, job, on_text)` runs `method` when its job's turn comes (the engine and batch lanes)."""
        if method.lane not in JOB_LANES:
            raise ValueError(f"{method.name} is not a job ({method.lane.value} lane): register it with handle")
        self._add(method, handler)

    def _add(self, method: Method[Any, Any], handler: Callable[..., Any]) -> None:
        if method in self._handlers:
            raise ValueError(f"{method.name} has a handler already")
        self._handlers[method] = handler

    def handler(self, method: Method[Any, Any]) -> Callable[[Any], Any]:
        return self._handlers[method]

    def job_handler(self, method: Method[Any, Any]) -> Callable[[Any, Job, OnText | None], Any]:
        return self._handlers[method]

    def missing(self) -> list[str]:
        """The protocol's methods that no handler answers (none, in a complete table)."""
        return sorted(name for name, method in methods.METHODS.items() if method not in self._handlers)

    def extra(self) -> list[str]:
        """Handlers for methods the protocol does not declare (none, in a complete table)."""
        return sorted(method.name for method in self._handlers if methods.METHODS.get(method.name) != method)
