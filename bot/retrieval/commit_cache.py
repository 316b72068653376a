"""A small cache of what is built once per indexed commit of a repository (maps, parts).

Keyed by the repository, its indexed commit and when it was indexed (a re-ingest of the
same commit is another version); the oldest entry goes when it is full. Safe to share
between threads.
"""

from __future__ import annotations

from threading import Lock
from typing import Generic, TypeVar

from bot.models import RepoState

T = TypeVar("T")


class CommitCache(Generic[T]):
    def __init__(self, size: int) -> None:
        self._size = size
        self._items: dict[tuple[str, str, str], T] = {}
        self._lock = Lock()

    @staticmethod
    def _key(state: RepoState) -> tuple[str, str, str]:
        return state.name, state.commit, state.indexed_at.isoformat()

    def get(self, state: RepoState) -> T | None:
        with self._lock:
            return self._items.get(self._key(state))

    def put(self, state: RepoState, value: T) -> None:
        with self._lock:
            if len(self._items) >= self._size:
                self._items.pop(next(iter(self._items)))
            self._items[self._key(state)] = value
