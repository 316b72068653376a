"""The embedding cache in PostgreSQL (`VectorCache`), shared by every ingesting process.

The same rules as `bot.store.embeddings`: float32 vectors by key, only an
optimisation (a failure is a miss or a skipped write, logged), `put_many` one
transaction (COPY into a temporary table, then one upsert), capped at
`max_entries` by evicting the least recently used in that transaction. Use is
recorded at most once per `TOUCH_AFTER` seconds per vector; eviction and touches
skip rows another process has locked, so two writers never deadlock.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar

from bot.errors import BotError
from bot.store import embeddings as local
from bot.store.postgres.connection import Database

if TYPE_CHECKING:
    import psycopg

    Conn = psycopg.Connection[tuple[object, ...]]

log = logging.getLogger(__name__)

T = TypeVar("T")

_STAGE = "CREATE TEMP TABLE incoming (key TEXT, dim INTEGER, vec BYTEA) ON COMMIT DROP"
_UPSERT = (
    "INSERT INTO vectors (key, dim, vec, used_at) SELECT key, dim, vec, clock_timestamp() "
    "FROM incoming ON CONFLICT (key) DO UPDATE SET dim = excluded.dim, vec = excluded.vec, "
    "used_at = excluded.used_at"
)
_EVICT = (
    "DELETE FROM vectors WHERE key IN (SELECT key FROM vectors ORDER BY used_at, key "
    "LIMIT %s FOR UPDATE SKIP LOCKED)"
)
_TOUCH = (
    "UPDATE vectors SET used_at = clock_timestamp() WHERE key IN (SELECT key FROM vectors "
    "WHERE key = ANY(%s) FOR UPDATE SKIP LOCKED)"
)
_FIND = (
    "SELECT key, dim, vec, used_at < clock_timestamp() - make_interval(secs => %s) "
    "FROM vectors WHERE key = ANY(%s)"
)


class PostgresEmbeddingCache:
    def __init__(self, database: Database, *, max_entries: int = local.DEFAULT_MAX_ENTRIES) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self._db = database
        self.max_entries = max_entries

    def __repr__(self) -> str:
        return f"PostgresEmbeddingCache({self._db.where!r})"

    def get_many(self, keys: Iterable[str]) -> dict[str, list[float]]:
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return {}
        stale: list[str] = []

        def select(conn: Conn) -> dict[str, list[float]]:
            found: dict[str, list[float]] = {}
            rows = conn.execute(_FIND, (local.TOUCH_AFTER, wanted)).fetchall()
            for key, dim, blob, old in rows:
                assert isinstance(blob, bytes | memoryview)
                vector = local.from_blob(bytes(blob))
                if len(vector) == dim:  # a torn row is a miss
                    found[str(key)] = vector
                    if old:
                        stale.append(str(key))
            return found

        empty: dict[str, list[float]] = {}
        found = self._quietly(select, empty)
        if stale:
            self._quietly(lambda conn: conn.execute(_TOUCH, (stale,)), None)
        return found

    def put_many(self, items: Mapping[str, Sequence[float]]) -> None:
        rows = [(key, len(vec), local.to_blob(vec)) for key, vec in items.items()]
        if rows:
            self._quietly(lambda conn: _insert(conn, rows, self.max_entries), None)

    def __len__(self) -> int:
        def count(conn: Conn) -> int:
            row = conn.execute("SELECT count(*) FROM vectors").fetchone()
            return int(str(row[0])) if row else 0

        return self._quietly(count, 0)

    def close(self) -> None:
        """The pool belongs to the store set (closed with it)."""

    def _quietly(self, op: Callable[[Conn], T], otherwise: T) -> T:
        try:
            return self._db.run(op)
        except BotError as exc:
            log.warning("embedding cache skipped: %s", exc.detail or exc.user_message)
            return otherwise


def _insert(conn: Conn, rows: Sequence[tuple[str, int, bytes]], max_entries: int) -> None:
    conn.execute(_STAGE)
    with conn.cursor().copy("COPY incoming (key, dim, vec) FROM STDIN") as copy:
        for item in rows:
            copy.write_row(item)
    conn.execute(_UPSERT)
    total = conn.execute("SELECT count(*) FROM vectors").fetchone()
    over = (int(str(total[0])) if total else 0) - max_entries
    if over > 0:
        conn.execute(_EVICT, (over,))
