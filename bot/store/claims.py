"""Event claims in one SQLite file (`CODECITE_HOME/events.sqlite`), shared by every process
on the data directory.

Each key is a primary-key row with its expiry. All keys of one claim are checked
and inserted in one BEGIN IMMEDIATE transaction (the database write lock), so
between processes too a claim takes every key or none. Expired claims are
deleted by the next claim, so the table stays small. A claim lost to a power cut
costs at most one duplicate answer: no fsync per event (synchronous NORMAL). A
damaged file is set aside: only old claims are lost.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from bot.store.sqlite import SqliteFile

FILENAME = "events.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS claims (
    key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS claims_expiry ON claims (expires_at);
"""


def _prepare(db: sqlite3.Connection) -> None:
    db.executescript(_SCHEMA)


class SqliteClaims:
    """`claim(*keys, ttl=...)` is True for exactly one caller per key until it expires."""

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._file = SqliteFile(path, "event store", _prepare, autocommit=True, timeout=15)

    def claim(self, *keys: str, ttl: float, owner: str = "") -> bool:
        """Claim every key, or none: False when any of them is already claimed and unexpired."""
        if ttl <= 0:
            raise ValueError("ttl must be positive")
        wanted = sorted({k for k in keys if k})
        if not wanted:
            raise ValueError("claim needs at least one non-empty key")
        now = self._clock()
        return self._file.write(lambda db: _claim_all(db, wanted, owner, now, now + ttl))

    def close(self) -> None:
        self._file.close()  # idempotent


def _claim_all(
    db: sqlite3.Connection, keys: Sequence[str], owner: str, now: float, expires: float
) -> bool:
    db.execute("DELETE FROM claims WHERE expires_at <= ?", (now,))
    marks = ",".join("?" * len(keys))
    held = db.execute(f"SELECT 1 FROM claims WHERE key IN ({marks}) LIMIT 1", keys).fetchone()
    if held is not None:  # someone holds one of these keys: take none
        return False
    db.executemany(
        "INSERT INTO claims (key, owner, expires_at) VALUES (?, ?, ?)",
        [(key, owner, expires) for key in keys],
    )
    return True
