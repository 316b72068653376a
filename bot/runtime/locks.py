"""Ingest locks moved to the storage seam (`stores.locks`, `bot.store.locks`). Nothing here
uses these path-taking names any more; they stay only until the other branches of issue
13 are merged (code written against them keeps working), then this module goes."""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path

from bot.store.locks import FileLocks, RepositoryBusy

__all__ = ["RepositoryBusy", "repo_busy", "repo_lock"]


def repo_lock(home: Path, name: str, *, wait: float | None = None) -> AbstractContextManager[None]:
    """`FileLocks(home).hold(name, wait=wait)`."""
    return FileLocks(home).hold(name, wait=wait)


def repo_busy(home: Path, name: str) -> bool:
    """`FileLocks(home).busy(name)`."""
    return FileLocks(home).busy(name)
