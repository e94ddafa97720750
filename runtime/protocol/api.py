"""The OpenAI-compatible API, served from inside the runtime (runtime/api): api.start, api.stop."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass
class ApiDefaults:
    """What a request leaves out and the API fills in (`lokal serve --preset`): a system prompt for a chat that
    has none, and sampling values for the fields a request does not set. None / "": the runtime's own default."""

    preset: str = ""  # the preset's name, for the log
    system_prompt: str = ""
    temperature: Optional[float] = None
    top_p: Optional[float] = None
    min_p: Optional[float] = None
    repeat_penalty: Optional[float] = None
    max_tokens: Optional[int] = None
    seed: Optional[int] = None


@dataclass
class ApiStartParams:
    host: str = "127.0.0.1"
    port: int = 8080  # 0: any free port (the result says which)
    allow_network: bool = False  # needed for any host that is not loopback
    key_file: Optional[str] = None  # the bearer key's file (made 0600 if missing); None: `api-key` in the config directory
    cors_origins: list[str] = field(default_factory=list)  # empty: no CORS headers; "*": any origin
    max_queue: int = 8  # API requests that may wait behind the running one before 429
    max_body: int = 4 * 1024 * 1024  # bytes; larger bodies get 413
    defaults: ApiDefaults = field(default_factory=ApiDefaults)  # a preset's prompt and sampling (lokal serve --preset)
    allow_remote_images: bool = False  # image_url parts may be http(s) URLs the server fetches (off: data URLs only)


@dataclass
class ApiStartResult:
    url: str  # http://HOST:PORT/v1
    host: str
    port: int
    key_file: str
    model: Optional[str]  # the id clients use for the loaded model (its file name); None while none is


@dataclass
class ApiStopResult:
    stopped: bool  # False: it was not serving
