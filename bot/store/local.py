"""The stores of one data directory (`CODECITE_HOME`): SQLite files and lock files.

    stores = open_store(home)
    stores.runs.last("api")          # runs.sqlite
    with stores.locks.hold("api"):   # locks/<hash>.lock
        ...
    stores.close()

Each part opens on first use, so a process creates only the files it needs
(the terminal never creates `events.sqlite`), and opening one damaged file never
stops another part. File names are the ones earlier versions used, so an
existing data directory keeps its records.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from bot.store.base import (
    Closable,
    CommandHashes,
    EventClaims,
    FeedbackRecords,
    HistoryRecords,
    IngestJobs,
    IngestLocks,
    PineconeStateRecords,
    QuestionQuota,
    RunRecords,
    SymbolTable,
    VectorCache,
)

P = TypeVar("P", bound=Closable)

RUNS, FEEDBACK, EVENTS = "runs.sqlite", "feedback.sqlite", "events.sqlite"
SYMBOLS, EMBEDDINGS, PINECONE_STATE = "symbols.sqlite", "embeddings.sqlite", "pinecone_state.sqlite"
LIMITS = "limits.sqlite"


class LocalStores:
    """Every part of the storage contract over one data directory; thread-safe."""

    def __init__(
        self,
        home: Path,
        *,
        symbols_path: Path | None = None,
        embedding_cache_max: int | None = None,
    ) -> None:
        self.home = home
        self._cache_max = embedding_cache_max
        self._symbols_path = symbols_path or home / SYMBOLS
        self._parts: dict[str, Closable] = {}
        self._lock = threading.Lock()
        self._closed = False

    def __repr__(self) -> str:
        return f"LocalStores({str(self.home)!r})"

    @property
    def runs(self) -> RunRecords:
        from bot.store.runs import RunLog

        return self._part(RUNS, lambda: RunLog(self.home / RUNS))

    @property
    def feedback(self) -> FeedbackRecords:
        from bot.store.feedback import FeedbackStore

        return self._part(FEEDBACK, lambda: FeedbackStore(self.home / FEEDBACK))

    @property
    def claims(self) -> EventClaims:
        from bot.store.claims import SqliteClaims

        return self._part(EVENTS, lambda: SqliteClaims(self.home / EVENTS))

    @property
    def locks(self) -> IngestLocks:
        from bot.store.locks import FileLocks

        return self._part("locks", lambda: FileLocks(self.home))

    @property
    def symbols(self) -> SymbolTable:
        from bot.store.symbols.table import SymbolStore

        return self._part(SYMBOLS, lambda: SymbolStore(self._symbols_path))

    @property
    def embedding_cache(self) -> VectorCache:
        from bot.store.embeddings import EmbeddingCache

        def open_cache() -> EmbeddingCache:
            if self._cache_max is None:
                return EmbeddingCache(self.home / EMBEDDINGS)
            return EmbeddingCache(self.home / EMBEDDINGS, max_entries=self._cache_max)

        return self._part(EMBEDDINGS, open_cache)

    @property
    def pinecone_state(self) -> PineconeStateRecords:
        from bot.store.pinecone_state import PineconeState

        return self._part(PINECONE_STATE, lambda: PineconeState(self.home / PINECONE_STATE))

    @property
    def quota(self) -> QuestionQuota:
        from bot.store.quota import SqliteQuota

        return self._part(LIMITS, lambda: SqliteQuota(self.home / LIMITS))

    @property
    def jobs(self) -> IngestJobs:
        from bot.store.jobs import FILENAME, SqliteJobs

        return self._part(FILENAME, lambda: SqliteJobs(self.home / FILENAME))

    @property
    def history(self) -> HistoryRecords:
        from bot.store.history import FILENAME as HISTORY
        from bot.store.history import SqliteHistory

        return self._part(HISTORY, lambda: SqliteHistory(self.home / HISTORY))

    def command_hashes(self, name: str, what: str = "") -> CommandHashes:
        from bot.store.command_hashes import JsonCommandHashes

        path = self.home / f"{name}.json"
        return self._part(path.name, lambda: JsonCommandHashes(path, what or f"{name} list"))

    def ping(self) -> None:
        """The data directory is there and writable (every part lives in it)."""
        from bot.errors import StoreError

        if not self.home.is_dir():
            raise StoreError("The data directory is missing.", detail=str(self.home))
        if not os.access(self.home, os.W_OK | os.X_OK):
            raise StoreError("The data directory is not writable.", detail=str(self.home))

    def close(self) -> None:
        """Close every part opened, last opened first; idempotent."""
        with self._lock:
            self._closed = True
            parts, self._parts = list(self._parts.values()), {}
        for part in reversed(parts):
            part.close()

    def _part(self, key: str, open_part: Callable[[], P]) -> P:
        with self._lock:
            if self._closed:
                from bot.errors import StoreError

                raise StoreError("codecite's stores are closed.", detail=key)
            part = self._parts.get(key)
            if part is None:
                part = self._parts[key] = open_part()
            return part  # type: ignore[return-value]  # each key is opened by one factory
