"""The rate limits' counts in PostgreSQL (`QuestionQuota`), shared by every replica.

The rows and arithmetic of `bot.store.quota` (one row per user, channel and UTC day)
in the `quota` table. A take is one transaction: the rows it needs are created if
missing (`INSERT ... ON CONFLICT DO NOTHING`), then locked (`SELECT ... FOR UPDATE`),
always in the order user, channel, day, so two takes never deadlock; the limits are
judged on what the locks hold, and the rows are written back only when every limit
lets the question through (a refusal rolls back, even the rows it created). Every
take locks the day's row, so takes run one at a time per database: fine at chat
speed (a take is a few round trips). Idle rows are pruned every PRUNE_EVERY takes,
skipping rows a take has locked.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot.errors import BotError, StoreError
from bot.runtime.limits import QuotaUsage, Refusal
from bot.store.postgres.connection import Database
from bot.store.quota import (
    CHANNEL,
    DAY,
    DAY_SECONDS,
    KEEP_DAYS,
    PRUNE_EVERY,
    USER,
    advanced,
    judge,
    utc_day,
    windows,
)

if TYPE_CHECKING:
    import psycopg

    Conn = psycopg.Connection[tuple[object, ...]]

log = logging.getLogger(__name__)

_KEYS = "unnest(%s::text[], %s::text[]) WITH ORDINALITY AS wanted (kind, key, n)"
_CREATE = (
    f"INSERT INTO quota (kind, key) SELECT kind, key FROM {_KEYS} ORDER BY n "
    "ON CONFLICT (kind, key) DO NOTHING"
)
_LOCK = (
    f"SELECT q.kind, q.stamps, q.answered FROM quota AS q JOIN {_KEYS} "
    "ON q.kind = wanted.kind AND q.key = wanted.key ORDER BY wanted.n FOR UPDATE OF q"
)
_WRITE = (  # every locked row in one statement; a window's stamps as exact decimal text
    "UPDATE quota AS q SET stamps = CASE WHEN w.kind = 'day' THEN q.stamps "
    "ELSE string_to_array(w.stamps, ',')::float8[] END, answered = q.answered + w.added, "
    "last_at = GREATEST(q.last_at, %s) "
    "FROM unnest(%s::text[], %s::text[], %s::text[], %s::int[]) AS w (kind, key, stamps, added) "
    "WHERE q.kind = w.kind AND q.key = w.key"
)
_PRUNE = (
    "DELETE FROM quota WHERE (kind, key) IN (SELECT kind, key FROM quota WHERE "
    "(kind <> 'day' AND last_at <= %s) OR (kind = 'day' AND key < %s) "
    "LIMIT 5000 FOR UPDATE SKIP LOCKED)"
)
_ACTIVE = "SELECT count(*) FROM quota WHERE kind = %s AND last_at > %s"
_ANSWERED = "SELECT answered FROM quota WHERE kind = 'day' AND key = %s"
_TRIES = 3  # a row pruned between its creation and its lock is created again


class _Refused(Exception):
    """Rolls back a take that a limit refused."""

    def __init__(self, refusal: Refusal) -> None:
        self.refusal = refusal


class PostgresQuota:
    def __init__(self, database: Database) -> None:
        self._db = database
        self._takes = itertools.count()

    def __repr__(self) -> str:
        return f"PostgresQuota({self._db.where!r})"

    def take(
        self,
        user_key: str,
        channel_key: str | None,
        *,
        per_user: int,
        per_channel: int,
        daily: int,
        window: float,
        now: float,
    ) -> Refusal | None:
        if next(self._takes) % PRUNE_EVERY == 0:
            self._prune(window, now)
        wins = windows(user_key, channel_key, per_user, per_channel)
        day = utc_day(now)
        kinds, keys = [w.kind for w in wins] + [DAY], [w.key for w in wins] + [day]

        def op(conn: Conn) -> None:
            rows = _locked(conn, kinds, keys)
            seen = [(w, _floats(rows[i][1])) for i, w in enumerate(wins)]
            refusal = judge(seen, _int(rows[-1][2]), daily, window=window, now=now)
            if refusal is not None:
                raise _Refused(refusal)
            stamps = [_text(advanced(s, w.limit, window, now)) for w, s in seen] + [""]
            added = [0] * len(wins) + [1]
            conn.execute(_WRITE, (now, kinds, keys, stamps, added))

        try:
            self._db.run(op)
        except _Refused as refused:
            return refused.refusal
        return None

    def usage(self, *, window: float, now: float) -> QuotaUsage:
        def read(conn: Conn) -> QuotaUsage:
            users = conn.execute(_ACTIVE, (USER, now - window)).fetchone()
            channels = conn.execute(_ACTIVE, (CHANNEL, now - window)).fetchone()
            day = conn.execute(_ANSWERED, (utc_day(now),)).fetchone()
            return QuotaUsage(
                _int(users[0]) if users else 0,
                _int(channels[0]) if channels else 0,
                _int(day[0]) if day else 0,
            )

        return self._db.run(read)

    def _prune(self, window: float, now: float) -> None:
        oldest = utc_day(now - KEEP_DAYS * DAY_SECONDS)
        try:
            self._db.run(lambda conn: conn.execute(_PRUNE, (now - window, oldest)))
        except BotError as exc:  # only housekeeping: the next prune tries again
            log.info("idle rate-limit rows not pruned: %s", exc.detail)

    def close(self) -> None:
        """The pool belongs to the store set (closed with it)."""


def _locked(conn: Conn, kinds: list[str], keys: list[str]) -> list[tuple[object, ...]]:
    """The rows of (kinds, keys), created when missing and locked, in that order."""
    for _ in range(_TRIES):
        conn.execute(_CREATE, (kinds, keys))
        rows = conn.execute(_LOCK, (kinds, keys)).fetchall()
        if len(rows) == len(kinds):
            return rows
    raise StoreError("The rate-limit counts could not be read or written.", detail="rows vanished")


def _text(stamps: Sequence[float]) -> str:
    return ",".join(repr(float(s)) for s in stamps)  # repr round-trips a float exactly


def _floats(value: object) -> Sequence[float]:
    return [float(v) for v in value] if isinstance(value, list) else ()


def _int(value: object) -> int:
    return int(value) if isinstance(value, int) else 0
