"""Protocol lines to the client: a bounded queue, written to stdout by a thread of its own.

The engine thread streams every reply's text (chat.delta). Written from there,
one client that stopped reading its pipe (64 KiB) stalled decoding for every
reply, the API's too, as llama.cpp's server would if its loop wrote to sockets
(it hands results to a queue instead). Here the engine thread only `offer`s a
line: it is queued unless STREAM_LIMIT lines already wait unwritten, and then
refused at once, and the server drops that reply with OUTPUT_STALLED
(runtime/server.py) while everything else goes on. Answers and notifications are
`send`: never refused (an answer is never lost), they wait for room while the
queue is full; no engine-thread code sends. Lines leave in the order they were
queued, so a reply's text always comes before its answer.
"""

from __future__ import annotations

import collections
import logging
import os
import threading
from typing import BinaryIO, Callable

log = logging.getLogger("lokal.runtime")

# Lines that may wait unwritten before a streaming reply's next line is refused (about 100 bytes each): far more
# than a client that reads ever leaves behind (the window busy for a second while four replies stream leaves
# a few hundred), and little memory.
STREAM_LIMIT = 4096
STREAM_LIMIT_ENV = "LOKAL_OUTPUT_QUEUE_LINES"  # tests: a smaller bound, so a stalled client is found in moments


def stream_limit_from_environment() -> int:
    value = os.environ.get(STREAM_LIMIT_ENV, "")
    return int(value) if value.isdigit() and int(value) > 0 else STREAM_LIMIT


class OutputWriter:
    def __init__(self, out: BinaryIO, stream_limit: int = STREAM_LIMIT, on_broken: Callable[[], None] = lambda: None):
        self._out = out
        self.stream_limit = stream_limit
        self._on_broken = on_broken
        self._lines: collections.deque[bytes] = collections.deque()
        self._unwritten = 0  # lines queued or being written
        self._changed = threading.Condition()
        self._closing = False
        self._broken = False  # the client is gone: lines are dropped
        self._thread = threading.Thread(target=self._write_lines, name="output", daemon=True)
        self._thread.start()

    @property
    def unwritten(self) -> int:
        """Lines queued and not yet written through to the client."""
        return self._unwritten

    def offer(self, line: bytes) -> bool:
        """Queue a line of a streaming reply unless the client has stopped reading (stream_limit lines wait
        unwritten); never blocks: the engine thread calls it. False: refused."""
        with self._changed:
            if self._broken:
                return True  # nobody reads any more: nothing to refuse, the server is stopping
            if self._unwritten >= self.stream_limit:
                return False
            self._queue(line)
            return True

    def send(self, line: bytes) -> None:
        """Queue a line that must not be lost (an answer, a notification); waits while the queue is full."""
        with self._changed:
            self._changed.wait_for(lambda: self._unwritten < self.stream_limit or self._broken or self._closing)
            if not self._broken:
                self._queue(line)

    def close(self, timeout: float = 10.0) -> bool:
        """Write what is queued (for at most `timeout` seconds) and stop the thread; True if everything was written."""
        with self._changed:
            self._closing = True
            self._changed.notify_all()
            flushed = self._changed.wait_for(lambda: self._unwritten == 0 or self._broken, timeout)
        self._thread.join(timeout=1.0)
        return flushed and not self._broken

    def _queue(self, line: bytes) -> None:
        self._lines.append(line)
        self._unwritten += 1
        self._changed.notify_all()

    def _write_lines(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._lines or self._closing)
                if not self._lines:
                    return
                lines = list(self._lines)  # all that waits, in one write
                self._lines.clear()
            try:
                data = memoryview(b"".join(lines))
                while data:
                    written = self._out.write(data)
                    data = data[written if written is not None else len(data) :]
                self._out.flush()
            except (OSError, ValueError):  # BrokenPipeError, or closed: the client is gone
                with self._changed:
                    self._broken = True
                    self._lines.clear()
                    self._unwritten = 0
                    self._changed.notify_all()
                self._on_broken()
                return
            with self._changed:
                self._unwritten -= len(lines)
                self._changed.notify_all()
