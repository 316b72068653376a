"""Ingest locks as PostgreSQL advisory locks (`IngestLocks`): one ingest per repository
across every process on every machine sharing the database.

Each `hold` takes a session-level advisory lock on a connection of its own, kept
for the `with` body and closed after it. The lock belongs to that session, so it
dies with it: a process killed mid-ingest (or a machine that vanished) frees its
repositories as soon as the server sees the connection drop. `busy` takes and
drops a shared lock at once, on a pooled connection: it never makes an ingest wait.
"""

from __future__ import annotations

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


# The 64-bit key of a repository's lock, computed by the server: advisory locks are per
# database, so the schema is part of the key (two deployments in two schemas of one
# database never exclude each other), and "codecite-ingest" keeps it apart from others.
_KEY = "hashtextextended('codecite-ingest:' || coalesce(current_schema(), '') || ':' || %s, 0)"


class AdvisoryLocks:
    def __init__(self, database: Database) -> None:
        self._db = database

    @contextmanager
    def hold(self, repo: str, *, wait: float | None = None) -> Iterator[None]:
        """Hold `repo`'s lock; `wait` seconds at most (None: forever, 0: not at all), then
        RepositoryBusy."""
        conn = self._db.connect()
        held = False
        try:
            with self._db.translated():
                _acquire(conn, repo, wait)
            held = True
            yield
        finally:
            if held:
                _release(conn, repo)
            conn.close()

    def busy(self, repo: str) -> bool:
        def probe(conn: Conn) -> bool:
            row = conn.execute(
                f"SELECT pg_try_advisory_xact_lock_shared({_KEY})", (repo,)
            ).fetchone()
            return not (row and row[0])  # a transaction lock: dropped at commit

        return self._db.run(probe)

    def close(self) -> None:
        """Nothing is held between calls."""


def _try(conn: Conn, repo: str) -> bool:
    row = conn.execute(f"SELECT pg_try_advisory_lock({_KEY})", (repo,)).fetchone()
    return bool(row and row[0])


def _release(conn: Conn, repo: str) -> None:
    """Unlock before closing: the server frees a closed session's locks only once its
    backend has exited, a moment later, and the next `busy` must not see them."""
    try:
        conn.execute(f"SELECT pg_advisory_unlock({_KEY})", (repo,))
    except Exception:  # noqa: BLE001 - a dead session has released its locks already
        return


def _acquire(conn: Conn, repo: str, wait: float | None) -> None:
    if wait is None:
        conn.execute(f"SELECT pg_advisory_lock({_KEY})", (repo,))
        return
    deadline = time.monotonic() + wait
    while not _try(conn, repo):
        if time.monotonic() >= deadline:
            raise RepositoryBusy()
        time.sleep(_PAUSE)
