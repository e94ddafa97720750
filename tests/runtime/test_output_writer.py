"""The runtime's output queue (runtime/output_writer.py) over a real pipe that its reader stops reading."""

from __future__ import annotations

import fcntl
import os
import threading

from runtime.output_writer import OutputWriter
from waiting import wait_until

LINE = b"x" * 99 + b"\n"


def pipe(size: int = 4096) -> tuple[int, int]:
    read_fd, write_fd = os.pipe()
    fcntl.fcntl(write_fd, fcntl.F_SETPIPE_SZ, size)  # the smallest pipe there is: it fills in a few lines
    return read_fd, write_fd


def test_a_reader_that_stops_reading_gets_stream_lines_refused_never_blocking_and_answers_kept_in_order():
    read_fd, write_fd = pipe()
    writer = OutputWriter(os.fdopen(write_fd, "wb", buffering=0), stream_limit=8)
    try:
        offered = 0
        while writer.offer(LINE):  # nobody reads: the pipe fills, then the queue, then lines are refused
            offered += 1
            assert offered < 10_000, "the queue never refused a line"
        assert writer.unwritten == 8
        answered = threading.Event()
        answer = threading.Thread(target=lambda: (writer.send(b"answer\n"), answered.set()), daemon=True)
        answer.start()  # an answer is never refused: it waits for room
        with os.fdopen(read_fd, "rb", buffering=0) as reader:
            received = b""
            while not received.endswith(b"answer\n"):
                chunk = reader.read(65536)
                assert chunk, "the writer closed the pipe before the answer"
                received += chunk
        assert answered.is_set() and received == LINE * offered + b"answer\n"
        wait_until(lambda: writer.unwritten == 0, 10, "the queue draining once the reader reads again")
        assert writer.offer(LINE)
    finally:
        writer.close(timeout=1)


def test_a_client_gone_is_noticed_and_nothing_blocks():
    read_fd, write_fd = pipe()
    gone = threading.Event()
    writer = OutputWriter(os.fdopen(write_fd, "wb", buffering=0), stream_limit=8, on_broken=gone.set)
    os.close(read_fd)
    writer.send(LINE)
    wait_until(gone.is_set, 10, "the writer noticing the broken pipe")
    writer.send(LINE)  # dropped: nobody reads any more
    assert writer.offer(LINE) and not writer.close(timeout=1)
