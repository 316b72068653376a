"""Event claims in PostgreSQL (`EventClaims`): exactly one replica wins each key.

One statement inserts every key of a claim; a key already claimed is taken over
only when its claim has expired (`ON CONFLICT ... DO UPDATE ... WHERE expired`),
by the server's clock, so replicas on machines whose clocks differ agree. When
fewer rows than keys were written the transaction is rolled back: all keys or
none. Keys are written in sorted order, so two claims never deadlock. Expired
rows are swept now and then, skipping rows another claim has locked.
"""

from __future__ import annotations

import itertools
import logging
from typing import TYPE_CHECKING

from bot.errors import BotError
from bot.store.postgres.connection import Database

if TYPE_CHECKING:
    import psycopg

    Conn = psycopg.Connection[tuple[object, ...]]

log = logging.getLogger(__name__)

SWEEP_EVERY = 200  # claims between two sweeps of expired rows
_SWEEP = (
    "DELETE FROM claims WHERE key IN (SELECT key FROM claims WHERE expires_at <= "
    "clock_timestamp() LIMIT 5000 FOR UPDATE SKIP LOCKED)"
)
_CLAIM = (
    "INSERT INTO claims (key, owner, expires_at) "
    "SELECT k, %s, clock_timestamp() + make_interval(secs => %s) FROM unnest(%s::text[]) AS k "
    "ORDER BY k ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, "
    "expires_at = excluded.expires_at WHERE claims.expires_at <= clock_timestamp()"
)


class _Refused(Exception):
    """Rolls a partial claim back."""


class PostgresClaims:
    def __init__(self, database: Database) -> None:
        self._db = database
        self._calls = itertools.count(1)

    def claim(self, *keys: str, ttl: float, owner: str = "") -> bool:
        """Claim every key, or none: False when any of them is claimed and unexpired."""
        if ttl <= 0:
            raise ValueError("ttl must be positive")
        wanted = sorted({k for k in keys if k})
        if not wanted:
            raise ValueError("claim needs at least one non-empty key")
        if next(self._calls) % SWEEP_EVERY == 0:
            self._sweep()

        def take(conn: Conn) -> bool:
            written = conn.execute(_CLAIM, (owner, float(ttl), wanted)).rowcount
            if written != len(wanted):
                raise _Refused  # someone holds one of these keys: keep none
            return True

        try:
            return self._db.run(take)
        except _Refused:
            return False

    def _sweep(self) -> None:
        try:
            self._db.run(lambda conn: conn.execute(_SWEEP))
        except BotError as exc:  # only housekeeping: the next sweep tries again
            log.info("expired claims not swept: %s", exc.detail)

    def close(self) -> None:
        """The pool belongs to the store set (closed with it)."""
