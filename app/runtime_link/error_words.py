"""The runtime's errors a user can act on, said in the window's language: from the error's code and the figures and
names its data carries (the runtime's own message is English, for logs and the command line). Any other error is
said in the runtime's words: those name files, llama.cpp's complaints and the hub's answers, which have none of
their own in another language."""

from __future__ import annotations

from typing import Any

from app.formatting import human_size
from app.ui.language import Context
from runtime.protocol import ErrorCode, RpcError

Errors = Context("Errors")
LOGIN = "hf auth login"  # a command: the same in every language


def said(error: RpcError) -> str:
    return error_text(error.code, error.message, error.data)


def error_text(code: int | None, message: str, data: Any) -> str:
    d: dict[str, Any] = data if isinstance(data, dict) else {}
    repo = d.get("repo") if isinstance(d.get("repo"), str) else None
    if code == ErrorCode.MODEL_TOO_LARGE and _sizes(d, "needed_bytes", "available_bytes"):
        needed, available = human_size(d["needed_bytes"]), human_size(d["available_bytes"])
        if d.get("where") == "gpu":
            return Errors.tr("The model needs about {needed} of GPU memory with these settings, and {available} is free: offload fewer "
                             "layers or choose a smaller context.").format(needed=needed, available=available)
        return Errors.tr("The model needs about {needed} of memory with these settings, and {available} is available: choose a smaller "
                         "quantization or context.").format(needed=needed, available=available)
    if code == ErrorCode.DISK_FULL and "what" in d and d.get("needed_bytes") is None:  # it filled up while writing
        return Errors.tr("The disk is full.")
    if code == ErrorCode.DISK_FULL and _sizes(d, "needed_bytes", "free_bytes"):  # refused before writing
        short = Errors.tr("Not enough disk space: {needed} more is needed, and {free} is free.").format(
            needed=human_size(d["needed_bytes"]), free=human_size(d["free_bytes"]))
        if _sizes(d, "floor_bytes") and d["floor_bytes"] > 0:
            short += " " + Errors.tr("Lokal leaves {floor} of it free for everything else.").format(floor=human_size(d["floor_bytes"]))
        return short
    if code == ErrorCode.NETWORK_ERROR:
        return Errors.tr("Hugging Face cannot be reached: check the network connection.")
    if code == ErrorCode.AUTH_REQUIRED and repo:
        if d.get("gated"):
            return Errors.tr("{repo} is a gated repository: accept its terms on the model page, then log in with `{login}` (or set HF_TOKEN).").format(
                repo=repo, login=LOGIN)
        return Errors.tr("{repo} needs a Hugging Face token: log in with `{login}` (or set HF_TOKEN).").format(repo=repo, login=LOGIN)
    if code == ErrorCode.ACCESS_DENIED and repo:
        if d.get("gated"):
            return Errors.tr("{repo} is a gated repository and your token has no access yet: accept its terms on the model page first.").format(repo=repo)
        return Errors.tr("Your Hugging Face token has no access to {repo}.").format(repo=repo)
    if code == ErrorCode.REPO_NOT_FOUND and repo and "has_token" in d:
        if d["has_token"]:
            return Errors.tr("No repository {repo} on Hugging Face.").format(repo=repo)
        return Errors.tr("No repository {repo} on Hugging Face; if it is private, log in with `{login}` (or set HF_TOKEN).").format(repo=repo, login=LOGIN)
    return message


def _sizes(data: dict[str, Any], *keys: str) -> bool:
    return all(isinstance(data.get(key), int) and not isinstance(data.get(key), bool) and data[key] >= 0 for key in keys)
