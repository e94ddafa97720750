"""Hub failures as protocol errors a person can act on.

huggingface_hub raises a family of HTTP errors and httpx2 raises transport
errors; users need to know which of a handful of things went wrong: the
repository or file does not exist, it needs a token, the token lacks access,
the network is down, the disk is full, or the bytes were corrupted.
"""

from __future__ import annotations

import errno

import httpx2
from huggingface_hub import errors as hf_errors

from runtime.gguf.reader import GGUFError
from runtime.protocol import ErrorCode, RpcError


class TransientError(Exception):
    """Worth retrying after a pause: a dropped connection, a timeout, a 5xx or 429."""


LOGIN_HINT = "log in with `hf auth login` (or set HF_TOKEN)"


def from_exception(exc: BaseException, what: str, has_token: bool) -> RpcError:
    """The RpcError for a failed hub call about `what` (a repo id or "repo/file")."""
    if isinstance(exc, RpcError):
        return exc
    if isinstance(exc, hf_errors.HFValidationError):  # a repository id that cannot be one (`../x`, a backslash)
        return RpcError(ErrorCode.INVALID_PARAMS, f"{what}: {exc}", {"repo": what})
    if isinstance(exc, hf_errors.GatedRepoError):
        if has_token:
            return RpcError(ErrorCode.ACCESS_DENIED, f"{what} is a gated repository and your token has no access yet: accept its terms on the model page first", {"repo": what, "gated": True})
        return RpcError(ErrorCode.AUTH_REQUIRED, f"{what} is a gated repository: {LOGIN_HINT} after accepting its terms on the model page", {"repo": what, "gated": True})
    if isinstance(exc, hf_errors.RevisionNotFoundError):
        return RpcError(ErrorCode.REPO_NOT_FOUND, f"revision not found in {what}", {"repo": what})
    if isinstance(exc, hf_errors.RemoteEntryNotFoundError):
        return RpcError(ErrorCode.FILE_NOT_FOUND, f"file not found: {what}", {"what": what})
    if isinstance(exc, hf_errors.RepositoryNotFoundError):
        hint = "" if has_token else f"; if it is private, {LOGIN_HINT}"
        return RpcError(ErrorCode.REPO_NOT_FOUND, f"repository not found: {what}{hint}", {"repo": what, "has_token": has_token})
    if isinstance(exc, hf_errors.HfHubHTTPError) and exc.response is not None:
        status = exc.response.status_code
        if status == 401:
            return RpcError(ErrorCode.AUTH_REQUIRED, f"{what} needs a Hugging Face token: {LOGIN_HINT}", {"repo": what})
        if status == 403:
            return RpcError(ErrorCode.ACCESS_DENIED, f"your token has no access to {what}", {"repo": what})
        return RpcError(ErrorCode.HUB_ERROR, f"the hub answered HTTP {status} for {what}", {"status": status})
    if isinstance(exc, (httpx2.TransportError, hf_errors.OfflineModeIsEnabled, ConnectionError, TransientError)):
        return RpcError(ErrorCode.NETWORK_ERROR, f"cannot reach Hugging Face ({type(exc).__name__}: {exc}); check the network connection", {"what": what})
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return disk_full(what)
    if isinstance(exc, GGUFError):
        return RpcError(ErrorCode.INVALID_MODEL, f"{what} is not a usable GGUF file: {exc}", {"what": what})
    raise exc


def disk_full(what: str, needed: int | None = None, free: int | None = None, floor: int | None = None) -> RpcError:
    """`floor`: the free space Lokal leaves on the disk for everything else (runtime/disk_space.py)."""
    if needed is not None and free is not None:
        message = f"not enough disk space for {what}: it needs {needed / 2**30:.2f} GiB more, {free / 2**30:.2f} GiB is free"
        if floor:
            message += f" and {floor / 2**30:.2f} GiB of it stays free for everything else"
    else:
        message = f"the disk is full while writing {what}"
    return RpcError(ErrorCode.DISK_FULL, message, {"what": what, "needed_bytes": needed, "free_bytes": free, "floor_bytes": floor})
