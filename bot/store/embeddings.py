"""The embedding cache's storage: one SQLite file (by default `CODECITE_HOME/embeddings.sqlite`)
mapping a key (`bot.llm.embedding_cache.cache_key`) to a float32 vector.

The cache is only an optimisation: a damaged file is set aside and started afresh
(`bot.store.sqlite`), and no failure of the cache fails an ingest: reads that fail
are misses, writes that fail are skipped (logged). `put_many` is one transaction.

Its size is capped (`max_entries`, CODECITE_EMBEDDING_CACHE_MAX): a `put_many` that
takes it over the cap evicts the least recently used vectors in the same
transaction. "Used" is when a vector was written or last found, recorded at most
once per `TOUCH_AFTER` seconds per vector, so reads rarely write.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TypeVar

import numpy as np

from bot.errors import BotError, DiskFullError
from bot.store.sqlite import SqliteFile

log = logging.getLogger(__name__)

T = TypeVar("T")

FILENAME = "embeddings.sqlite"
_REFILL = "vectors are fetched again as needed"
_BATCH = 500  # keys per SELECT, well under SQLite's bound-parameter limit
DEFAULT_MAX_ENTRIES = 500_000  # about 3 GB of 1,536-dimension vectors
TOUCH_AFTER = 3600.0  # seconds before a found vector's use is recorded again
_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    key TEXT PRIMARY KEY,
    dim INTEGER NOT NULL,
    vec BLOB NOT NULL,
    used REAL NOT NULL DEFAULT 0
) WITHOUT ROWID
"""


class EmbeddingCache:
    """Thread-safe key -> vector store. Vectors are kept as little-endian float32."""

    def __init__(self, path: Path, *, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.path = path
        self.max_entries = max_entries
        try:
            self._file = SqliteFile(path, "embedding cache", _prepare, remedy=_REFILL)
        except DiskFullError:
            raise
        except BotError as exc:  # e.g. an unwritable directory: the caller decides
            raise OSError(f"{path}: {exc.detail or exc.user_message}") from exc

    def __repr__(self) -> str:
        return f"EmbeddingCache({str(self.path)!r})"

    def get_many(self, keys: Iterable[str]) -> dict[str, list[float]]:
        """The cached vectors among `keys` (missing keys are simply absent)."""
        wanted = list(dict.fromkeys(keys))

        stale: list[str] = []

        def select_all(db: sqlite3.Connection) -> dict[str, list[float]]:
            found: dict[str, list[float]] = {}
            before = time.time() - TOUCH_AFTER
            for start in range(0, len(wanted), _BATCH):
                for key, vector, used in _select(db, wanted[start : start + _BATCH]):
                    found[key] = vector
                    if used <= before:
                        stale.append(key)
            return found

        empty: dict[str, list[float]] = {}
        found = self._quietly(select_all, empty)
        if stale:  # LRU bookkeeping, best-effort
            self._quietly(lambda db: _touch(db, stale, time.time()), None, write=True)
        return found

    def put_many(self, items: Mapping[str, Sequence[float]]) -> None:
        """Store vectors (an existing key is overwritten), then evict the least recently
        used beyond `max_entries`, in one transaction."""
        now = time.time()
        rows = [(key, len(vec), to_blob(vec), now) for key, vec in items.items()]
        if rows:
            self._quietly(lambda db: _insert(db, rows, self.max_entries), None, write=True)

    def __len__(self) -> int:
        return self._quietly(
            lambda db: int(db.execute("SELECT count(*) FROM vectors").fetchone()[0]), 0
        )

    def close(self) -> None:
        self._file.close()  # idempotent

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _quietly(
        self, op: Callable[[sqlite3.Connection], T], otherwise: T, *, write: bool = False
    ) -> T:
        """The cache only saves work: a failure (a full disk, a lock) is logged, not raised."""
        try:
            return self._file.write(op) if write else self._file.run(op)
        except BotError as exc:
            log.warning("embedding cache %s skipped: %s", self.path, exc.detail or exc.user_message)
            return otherwise


def _prepare(db: sqlite3.Connection) -> None:
    db.execute(_SCHEMA)
    columns = {row[1] for row in db.execute("PRAGMA table_info(vectors)")}
    if "used" not in columns:  # caches written before the size cap: their vectors go first
        db.execute("ALTER TABLE vectors ADD COLUMN used REAL NOT NULL DEFAULT 0")
    db.execute("CREATE INDEX IF NOT EXISTS vectors_used ON vectors (used)")
    # A garbage file fails here; damage deeper in the file surfaces in a later query and is
    # handled there (a full integrity check would read every page).
    db.execute("SELECT 1 FROM vectors LIMIT 1").fetchall()


def _select(
    db: sqlite3.Connection, keys: Sequence[str]
) -> Iterator[tuple[str, list[float], float]]:
    marks = ",".join("?" * len(keys))
    sql = f"SELECT key, dim, vec, used FROM vectors WHERE key IN ({marks})"
    for key, dim, blob, used in db.execute(sql, keys).fetchall():
        vector = from_blob(blob)
        if len(vector) == dim:  # a torn row is a miss, not an error
            yield key, vector, float(used)


def _touch(db: sqlite3.Connection, keys: Sequence[str], now: float) -> None:
    db.executemany("UPDATE vectors SET used = ? WHERE key = ?", [(now, k) for k in keys])


def _insert(
    db: sqlite3.Connection, rows: list[tuple[str, int, bytes, float]], max_entries: int
) -> None:
    db.executemany("INSERT OR REPLACE INTO vectors (key, dim, vec, used) VALUES (?, ?, ?, ?)", rows)
    over = int(db.execute("SELECT count(*) FROM vectors").fetchone()[0]) - max_entries
    if over > 0:
        db.execute(
            "DELETE FROM vectors WHERE key IN (SELECT key FROM vectors ORDER BY used, key LIMIT ?)",
            (over,),
        )


def to_blob(vector: Sequence[float]) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes) -> list[float]:
    values: list[float] = np.frombuffer(blob, dtype="<f4").astype(np.float64).tolist()
    return values
