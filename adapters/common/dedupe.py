"""Claim an incoming event once, across threads and processes sharing the data directory.

Chat platforms deliver one user action several times: Slack retries events it
thinks were not acknowledged, sends both `app_mention` and `message` for one
mention, and several bot processes may receive the same event. Whoever claims
an event's keys first answers it; everyone else drops it.

Claims live in SQLite (`CODECITE_HOME/events.sqlite`): each key is an
`INSERT OR IGNORE` into a primary-key column, all keys of one event in one
`BEGIN IMMEDIATE` transaction (the database write lock), rolled back if any
key was already there: all or nothing, between processes too. Claims expire,
so the table stays small.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from bot.store.sqlite import SqliteFile

DEFAULT_TTL_SECONDS = 24 * 3600.0  # Slack stops retrying after about an hour

_SCHEMA = """
CREATE TABLE IF NOT EXISTS claims (
    key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS claims_expiry ON claims (expires_at);
"""


def _prepare(db: sqlite3.Connection) -> None:
    db.executescript(_SCHEMA)


class EventDedupe:
    """`claim(*keys)` is True for exactly one caller per key until the claim expires."""

    def __init__(
        self,
        path: Path,
        *,
        ttl_seconds: float = DEFAULT_TTL_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if ttl_seconds <= 0:
            raise ValueError("ttl_seconds must be positive")
        self._ttl = ttl_seconds
        self._clock = clock
        # Autocommit mode: transactions are opened explicitly with BEGIN IMMEDIATE. A claim
        # lost to a power cut costs at most one duplicate answer: no fsync per event
        # (synchronous NORMAL). A damaged file is set aside: only old claims are lost.
        self._file = SqliteFile(path, "event store", _prepare, autocommit=True, timeout=15)

    @classmethod
    def in_home(cls, home: Path, *, ttl_seconds: float = DEFAULT_TTL_SECONDS) -> EventDedupe:
        return cls(home / "events.sqlite", ttl_seconds=ttl_seconds)

    def claim(self, *keys: str, owner: str = "") -> bool:
        """Claim every key, or none: False when any of them is already claimed and unexpired."""
        wanted = sorted({k for k in keys if k})
        if not wanted:
            raise ValueError("claim needs at least one non-empty key")
        now = self._clock()
        return self._file.run(lambda db: self._claim_all(db, wanted, owner, now))

    def _claim_all(self, db: sqlite3.Connection, keys: list[str], owner: str, now: float) -> bool:
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("DELETE FROM claims WHERE expires_at <= ?", (now,))
            for key in keys:
                inserted = db.execute(
                    "INSERT OR IGNORE INTO claims (key, owner, expires_at) VALUES (?, ?, ?)",
                    (key, owner, now + self._ttl),
                ).rowcount
                if inserted == 0:  # someone holds this key: undo our other inserts
                    db.execute("ROLLBACK")
                    return False
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                with suppress(sqlite3.Error):  # keep the error that got us here
                    db.execute("ROLLBACK")
            raise
        return True

    def close(self) -> None:
        self._file.close()
