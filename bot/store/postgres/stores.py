"""The stores of one PostgreSQL database (`CODECITE_DATABASE_URL`), shared by every process
on every machine that names it.

    stores = PostgresStores(url)
    stores.runs.last("api")          # the runs table
    with stores.locks.hold("api"):   # an advisory lock
        ...
    stores.close()                   # closes the pool

Every part is in PostgreSQL: the run log, feedback, event claims, rate-limit counts,
ingest locks, the symbol table, the embedding cache, command-registration hashes,
Pinecone's repository state and re-ingest jobs; nothing is written to the data
directory. The schema is migrated when the first part opens (the same advisory-locked
migrations as `codecite migrate`, so many processes may start at once).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TypeVar

from bot.errors import StoreError
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
from bot.store.embeddings import DEFAULT_MAX_ENTRIES
from bot.store.postgres.connection import Database, redact

log = logging.getLogger(__name__)

P = TypeVar("P", bound=Closable)


class PostgresStores:
    """Every part of the storage contract; thread-safe; `close()` idempotent."""

    def __init__(
        self, url: str, *, embedding_cache_max: int = DEFAULT_MAX_ENTRIES, migrate: bool = True
    ) -> None:
        self.database = Database(url)
        self._cache_max = embedding_cache_max
        self._migrate = migrate
        self._migrated = False
        self._parts: dict[str, Closable] = {}
        self._lock = threading.Lock()
        self._closed = False
        self._url = url

    def __repr__(self) -> str:
        return f"PostgresStores({redact(self._url)!r})"

    @property
    def runs(self) -> RunRecords:
        from bot.store.postgres.runs import PostgresRunLog

        return self._part("runs", lambda: PostgresRunLog(self.database))

    @property
    def feedback(self) -> FeedbackRecords:
        from bot.store.postgres.feedback import PostgresFeedback

        return self._part("feedback", lambda: PostgresFeedback(self.database))

    @property
    def claims(self) -> EventClaims:
        from bot.store.postgres.claims import PostgresClaims

        return self._part("claims", lambda: PostgresClaims(self.database))

    @property
    def locks(self) -> IngestLocks:
        from bot.store.postgres.locks import AdvisoryLocks

        return self._part("locks", lambda: AdvisoryLocks(self.database))

    @property
    def symbols(self) -> SymbolTable:
        from bot.store.postgres.symbols import PostgresSymbols

        return self._part("symbols", lambda: PostgresSymbols(self.database))

    @property
    def embedding_cache(self) -> VectorCache:
        from bot.store.postgres.embeddings import PostgresEmbeddingCache

        return self._part(
            "embeddings",
            lambda: PostgresEmbeddingCache(self.database, max_entries=self._cache_max),
        )

    @property
    def pinecone_state(self) -> PineconeStateRecords:
        from bot.store.postgres.pinecone_state import PostgresPineconeState

        return self._part("pinecone_state", lambda: PostgresPineconeState(self.database))

    @property
    def quota(self) -> QuestionQuota:
        from bot.store.postgres.quota import PostgresQuota

        return self._part("quota", lambda: PostgresQuota(self.database))

    @property
    def jobs(self) -> IngestJobs:
        from bot.store.postgres.jobs import PostgresJobs

        return self._part("jobs", lambda: PostgresJobs(self.database))

    @property
    def history(self) -> HistoryRecords:
        from bot.store.postgres.history import PostgresHistory

        return self._part("history", lambda: PostgresHistory(self.database))

    def command_hashes(self, name: str, what: str = "") -> CommandHashes:
        from bot.store.postgres.command_hashes import PostgresCommandHashes

        return self._part(
            f"hashes:{name}",
            lambda: PostgresCommandHashes(self.database, name, what or f"{name} list"),
        )

    def ping(self) -> None:
        """The database answers a round trip (StoreError naming the host, never the password)."""
        if self._closed:
            raise StoreError("codecite's stores are closed.", detail="ping")
        self.database.run(lambda conn: conn.execute("SELECT 1").fetchone())

    def close(self) -> None:
        """Close every part and the pool; idempotent."""
        with self._lock:
            self._closed = True
            parts, self._parts = list(self._parts.values()), {}
        for part in reversed(parts):
            part.close()
        self.database.close()

    def _part(self, key: str, open_part: Callable[[], P]) -> P:
        with self._lock:
            if self._closed:
                raise StoreError("codecite's stores are closed.", detail=key)
            if self._migrate and not self._migrated:
                self._migrate_now()
            part = self._parts.get(key)
            if part is None:
                part = self._parts[key] = open_part()
            return part  # type: ignore[return-value]  # each key is opened by one factory

    def _migrate_now(self) -> None:
        from bot.store.postgres.migrations import migrate

        applied = migrate(self.database)
        if applied:
            log.info("database schema migrated to version %d", applied[-1])
        self._migrated = True
