"""Where the hub is and who we are to it, taken from huggingface_hub's own settings.

The endpoint is read at call time (HF_ENDPOINT, else the library's default) and
passed explicitly, so a test or a mirror can point the runtime elsewhere
without depending on when huggingface_hub was first imported. The token is the
one the standard `hf auth login` stored (or HF_TOKEN).
"""

from __future__ import annotations

import os
import threading

from huggingface_hub import HfApi, constants, get_token, hf_hub_url, set_client_factory
from huggingface_hub.utils import build_hf_headers

# huggingface_hub sends its API requests with no timeout, so a network that swallows packets would
# hang a search forever; every request without a limit gets these (seconds).
TIMEOUTS = {"connect": 10.0, "read": 30.0, "write": 30.0, "pool": 30.0}
_bounded = threading.Event()

from runtime import __version__


def endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")


def token() -> str | None:
    return get_token()


def _bound_timeouts(request) -> None:
    timeouts = dict(request.extensions.get("timeout") or {})
    request.extensions = {**request.extensions, "timeout": {k: timeouts.get(k) or v for k, v in TIMEOUTS.items()}}


def _bounded_client():
    from huggingface_hub.utils._http import default_client_factory

    client = default_client_factory()  # its redirects and request hooks, plus ours
    client.event_hooks = {**client.event_hooks, "request": [*client.event_hooks["request"], _bound_timeouts]}
    return client


def api() -> HfApi:
    if not _bounded.is_set():
        _bounded.set()
        set_client_factory(_bounded_client)
    return HfApi(endpoint=endpoint(), library_name="lokal", library_version=__version__)


def file_url(repo: str, filename: str, revision: str) -> str:
    return hf_hub_url(repo, filename, revision=revision, endpoint=endpoint())


def headers() -> dict[str, str]:
    h = build_hf_headers(library_name="lokal", library_version=__version__)
    h["Accept-Encoding"] = "identity"  # byte ranges and sizes refer to the file itself
    return h
