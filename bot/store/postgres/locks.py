"""Ingest locks as PostgreSQL advisory locks (`IngestLocks`): one ingest per repository
across every process on every machine sharing the database.

Each `hold` takes a session-level advisory lock on a connection of its own, kept
for the `with` body and closed after it. The lock belongs to that session, so it
dies with it: a process killed mid-ingest (or a machine that vanished) frees its
repositories as soon as the server sees the connection drop. `busy` takes and
drops a shared lock at once, on a pooled connection: it never makes an ingest wait.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from bot.store.locks import RepositoryBusy
from bot.store.postgres.connection import Database

if TYPE_CHECKING:
    import psycopg

    Conn = psycopg.Connection[tuple[object, ...]]

_PAUSE = 0.05  # seconds between tries while waiting for a lock


def lock_key(repo: str) -> int:
    """A signed 64-bit advisory-lock key for `repo` (distinct from the migration lock's)."""
    digest = hashlib.sha256(f"codecite-ingest:{repo}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class AdvisoryLocks:
    def __init__(self, database: Database) -> None:
        self._db = database

    @contextmanager
    def hold(self, repo: str, *, wait: float | None = None) -> Iterator[None]:
        """Hold `repo`'s lock; `wait` seconds at most (None: forever, 0: not at all), then
        RepositoryBusy."""
        key = lock_key(repo)
        conn = self._db.connect()
        try:
            with self._db.translated():
                _acquire(conn, key, wait)
            yield
        finally:
            conn.close()  # closing the session releases its lock

    def busy(self, repo: str) -> bool:
        key = lock_key(repo)

        def probe(conn: Conn) -> bool:
            row = conn.execute("SELECT pg_try_advisory_xact_lock_shared(%s)", (key,)).fetchone()
            return not (row and row[0])  # a transaction lock: dropped at commit

        return self._db.run(probe)

    def close(self) -> None:
        """Nothing is held between calls."""


def _try(conn: Conn, key: int) -> bool:
    row = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
    return bool(row and row[0])


def _acquire(conn: Conn, key: int, wait: float | None) -> None:
    if wait is None:
        conn.execute("SELECT pg_advisory_lock(%s)", (key,))
        return
    deadline = time.monotonic() + wait
    while not _try(conn, key):
        if time.monotonic() >= deadline:
            raise RepositoryBusy()
        time.sleep(_PAUSE)
