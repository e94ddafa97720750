"""A remote GGUF file's header, read with HTTP range requests: the header only, never the weights.

`read_header` parses from a stream; `RangeStream` is a stream over a URL that
fetches the next byte range whenever the parser reads past what it has, in
growing steps (a header is a few kB for tiny models, a few MB once the
tokenizer's vocabulary and merges are in). The file's total size comes from
the 206 reply's Content-Range.
"""

from __future__ import annotations

import re

import httpx2

from runtime.gguf.reader import GGUFHeader, NeedMoreData, read_header
from runtime.hub import hf
from runtime.hub.errors import TransientError

FIRST_RANGE = 1 << 20
MAX_RANGE = 16 << 20
MAX_HEADER_BYTES = 256 << 20  # the reader refuses anything bigger anyway
TIMEOUT = httpx2.Timeout(20.0, connect=10.0)
_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)")


class RangeStream:
    def __init__(self, client: httpx2.Client, url: str, headers: dict[str, str]):
        self._client = client
        self._url = url
        self._headers = headers
        self._buffer = bytearray()
        self._pos = 0
        self._step = FIRST_RANGE
        self.total_size: int | None = None
        self.fetched = 0  # bytes transferred, for tests and logs
        self.requests = 0

    def _fetch_more(self) -> bool:
        start = len(self._buffer)
        if (self.total_size is not None and start >= self.total_size) or start >= MAX_HEADER_BYTES:
            return False
        end = start + self._step - 1
        self._step = min(self._step * 2, MAX_RANGE)
        headers = {**self._headers, "Range": f"bytes={start}-{end}"}
        self.requests += 1
        try:
            with self._client.stream("GET", self._url, headers=headers) as response:
                _raise_for_status(response)
                if response.status_code == 206:
                    m = _CONTENT_RANGE.match(response.headers.get("Content-Range", ""))
                    if m and m.group(3) != "*":
                        self.total_size = int(m.group(3))
                    data = response.read()
                elif response.status_code == 200:
                    # The server ignored the range: take what we asked for from the whole body, then hang up.
                    self.total_size = int(response.headers.get("Content-Length") or 0) or None
                    whole = bytearray()
                    for chunk in response.iter_bytes():
                        whole += chunk
                        if len(whole) > end:
                            break
                    data = bytes(whole[start : end + 1])
                else:
                    raise TransientError(f"unexpected HTTP {response.status_code} for a range request")
        except httpx2.TransportError as exc:
            raise TransientError(f"{type(exc).__name__}: {exc}") from exc
        self.fetched += len(data)
        self._buffer += data
        return bool(data)

    def read(self, n: int) -> bytes:
        while len(self._buffer) - self._pos < n:
            if not self._fetch_more():
                break
        data = bytes(self._buffer[self._pos : self._pos + n])
        self._pos += len(data)
        return data


def _raise_for_status(response: httpx2.Response) -> None:
    if response.status_code < 400:
        return
    from huggingface_hub.utils import hf_raise_for_status

    response.read()
    if response.status_code in (429,) or response.status_code >= 500:
        raise TransientError(f"HTTP {response.status_code}")
    hf_raise_for_status(response)


def fetch_header(url: str, client: httpx2.Client | None = None) -> tuple[GGUFHeader, RangeStream]:
    """The GGUF header at `url`, and the stream (how many bytes and requests it took)."""
    own = client is None
    client = client or httpx2.Client(follow_redirects=True, timeout=TIMEOUT)
    try:
        stream = RangeStream(client, url, hf.headers())
        try:
            header = read_header(stream)  # type: ignore[arg-type]
        except NeedMoreData as exc:
            raise NeedMoreData(f"{exc} (the remote file is {stream.total_size} bytes)") from None
        header.file_size = stream.total_size
        return header, stream
    finally:
        if own:
            client.close()
