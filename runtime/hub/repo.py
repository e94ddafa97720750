"""One repository on the hub: its commit, its GGUF files with sizes and sha256, as quantization levels."""

from __future__ import annotations

from dataclasses import dataclass

from runtime.hub import hf
from runtime.hub.errors import from_exception
from runtime.hub.quants import Level, RemoteFile, group_levels


@dataclass
class RepoListing:
    repo: str
    commit: str
    files: list[RemoteFile]
    gated: bool

    @property
    def levels(self) -> list[Level]:
        return group_levels(self.files)


def list_repo(repo: str, revision: str = "main") -> RepoListing:
    """Everything in `repo` at `revision`, from one model_info call (with file metadata)."""
    try:
        info = hf.api().model_info(repo, revision=revision, files_metadata=True)
    except Exception as exc:
        raise from_exception(exc, repo, hf.token() is not None) from None
    files = [
        RemoteFile(path=s.rfilename, size=int(s.size or (s.lfs.size if s.lfs else 0) or 0), sha256=s.lfs.sha256 if s.lfs else None)
        for s in (info.siblings or [])
    ]
    return RepoListing(repo=repo, commit=info.sha or revision, files=files, gated=bool(info.gated))
