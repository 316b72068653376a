"""A disposable on-disk cache of embedding vectors, keyed by a hash of what was embedded.

One SQLite file (by default `CODECITE_HOME/embeddings.sqlite`) maps a key
(`cache_key(model, dimensions, text)`) to a float32 vector. Re-ingesting code
that did not change, or re-embedding after an index is rebuilt, then costs
no API calls. The cache is only an optimisation: a corrupt or unreadable file
is logged, deleted and recreated, never allowed to fail an ingest.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from types import TracebackType

import numpy as np

log = logging.getLogger(__name__)

FILENAME = "embeddings.sqlite"
_BATCH = 500  # keys per SELECT, well under SQLite's bound-parameter limit
_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    key TEXT PRIMARY KEY,
    dim INTEGER NOT NULL,
    vec BLOB NOT NULL
) WITHOUT ROWID
"""


def cache_key(model: str, dimensions: int | None, text: str) -> str:
    """sha256 of model, requested dimensions ("" for the model's own) and text."""
    dims = "" if dimensions is None else str(dimensions)
    payload = f"{model}\x00{dims}\x00{text}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(payload).hexdigest()


class EmbeddingCache:
    """Thread-safe key -> vector store. Vectors are kept as little-endian float32."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._conn = self._open()

    def __repr__(self) -> str:
        return f"EmbeddingCache({str(self.path)!r})"

    def get_many(self, keys: Iterable[str]) -> dict[str, list[float]]:
        """The cached vectors among `keys` (missing keys are simply absent)."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, list[float]] = {}
        with self._lock:
            try:
                for start in range(0, len(wanted), _BATCH):
                    found.update(self._select(wanted[start : start + _BATCH]))
            except sqlite3.DatabaseError as exc:
                self._recover(exc)
                return {}
        return found

    def put_many(self, items: Mapping[str, Sequence[float]]) -> None:
        """Store vectors; an existing key is overwritten."""
        rows = [(key, len(vec), _to_blob(vec)) for key, vec in items.items()]
        if not rows:
            return
        with self._lock:
            try:
                self._insert(rows)
            except sqlite3.DatabaseError as exc:
                self._recover(exc)
                with suppress(sqlite3.DatabaseError):
                    self._insert(rows)

    def __len__(self) -> int:
        with self._lock:
            try:
                row = self._conn.execute("SELECT count(*) FROM vectors").fetchone()
            except sqlite3.DatabaseError as exc:
                self._recover(exc)
                return 0
        return int(row[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # internals (callers hold the lock) -------------------------------------

    def _select(self, keys: Sequence[str]) -> Iterator[tuple[str, list[float]]]:
        marks = ",".join("?" * len(keys))
        sql = f"SELECT key, dim, vec FROM vectors WHERE key IN ({marks})"
        for key, dim, blob in self._conn.execute(sql, keys).fetchall():
            vector = _from_blob(blob)
            if len(vector) == dim:  # a torn row is a miss, not an error
                yield key, vector

    def _insert(self, rows: list[tuple[str, int, bytes]]) -> None:
        with self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO vectors (key, dim, vec) VALUES (?, ?, ?)", rows
            )

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            return _connect(self.path)
        except sqlite3.DatabaseError as exc:
            log.warning("embedding cache %s is unreadable (%s); starting a new one", self.path, exc)
            _remove(self.path)
            return _connect(self.path)

    def _recover(self, exc: sqlite3.DatabaseError) -> None:
        log.warning("embedding cache %s failed (%s); starting a new one", self.path, exc)
        with suppress(sqlite3.Error):
            self._conn.close()
        _remove(self.path)
        self._conn = _connect(self.path)


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, check_same_thread=False, timeout=10)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")  # losing the last writes of a cache is fine
        # A garbage file fails here; damage deeper in the file surfaces in a later
        # query and is handled there (a full integrity check would read every page).
        conn.execute(_SCHEMA)
        conn.execute("SELECT 1 FROM vectors LIMIT 1").fetchall()
    except sqlite3.DatabaseError:
        conn.close()
        raise
    return conn


def _remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        with suppress(FileNotFoundError):
            path.with_name(path.name + suffix).unlink()


def _to_blob(vector: Sequence[float]) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def _from_blob(blob: bytes) -> list[float]:
    values: list[float] = np.frombuffer(blob, dtype="<f4").astype(np.float64).tolist()
    return values
