"""Pictures the API was sent, kept in memory by their sha256 while they are likely to come again.

An OpenAI-style client sends the whole conversation, pictures included, with every request. The API
decodes each picture once per request and puts its bytes here; the engine finds them by id as it
finds the window's attachments in the attachment store (runtime/documents/store.py), and the
projector's own cache (projector.py) spares the decode of one already tokenized. Nothing of the API's
is written to disk: the oldest pictures go once the total passes MAX_BYTES.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

MAX_BYTES = 256 * 1024 * 1024


class RecentImages:
    def __init__(self, max_bytes: int = MAX_BYTES):
        self.max_bytes = max_bytes
        self._images: OrderedDict[str, bytes] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def put(self, data: bytes) -> str:
        """Keep `data`; returns its id (sha256 hex)."""
        image_id = hashlib.sha256(data).hexdigest()
        with self._lock:
            if image_id in self._images:
                self._images.move_to_end(image_id)
                return image_id
            self._images[image_id] = data
            self._size += len(data)
            while self._size > self.max_bytes and len(self._images) > 1:
                _old, dropped = self._images.popitem(last=False)
                self._size -= len(dropped)
        return image_id

    def get(self, image_id: str) -> bytes | None:
        with self._lock:
            return self._images.get(image_id)


RECENT = RecentImages()  # the runtime process's one: the API puts, the engine gets
