"""Dense vectors for LocalIndex: float32 BLOBs on disk, one numpy matrix in memory.

One dimension per index (changing the embedding model means replacing every
vector). The matrix is loaded once and reused until the index's vector
generation (a counter every writer bumps in the same transaction that changes
vectors, in any process) moves on. Rows are grouped by repository, so a scoped search
multiplies only the contiguous slices of the repositories in scope.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from bot.errors import StoreError

log = logging.getLogger(__name__)

Matrix = npt.NDArray[np.float32]


def encode(values: Sequence[float]) -> bytes:
    """Little-endian float32 bytes, refusing empty or non-finite vectors."""
    array = np.asarray(values, dtype="<f4")
    if array.ndim != 1 or array.size == 0:
        raise StoreError(detail="a vector must be a non-empty list of numbers")
    if not np.isfinite(array).all():
        raise StoreError(detail="a vector contains NaN or infinity")
    return array.tobytes()


def common_dimension(vectors: Mapping[str, Sequence[float]], stored: int | None) -> int | None:
    """The one dimension of `vectors`, or None if there are none.

    StoreError if they disagree with each other or with the dimension `stored`.
    """
    dims = {len(v) for v in vectors.values()}
    if not dims:
        return None
    if len(dims) > 1:
        raise StoreError(detail=f"vectors of different sizes in one change set: {sorted(dims)}")
    (dim,) = dims
    if stored is not None and dim != stored:
        raise StoreError(
            f"Embeddings have {dim} dimensions but the index holds {stored}; "
            "reindex after changing the embedding model."
        )
    return dim


_VECTOR_UPSERT = (
    "INSERT INTO vectors (rid, dim, data) VALUES (?, ?, ?) ON CONFLICT (rid) DO UPDATE"
    " SET dim = excluded.dim, data = excluded.data WHERE vectors.data IS NOT excluded.data"
)


def store_vectors(
    conn: sqlite3.Connection,
    repo: str,
    rids: Mapping[str, int],
    vectors: Mapping[str, Sequence[float]],
) -> int:
    """Store vectors by chunk id (inside the caller's write transaction).

    Returns how many rows actually changed. Refuses vectors naming no chunk of
    `repo` and any write that would leave two dimensions in the index.
    """
    dim = common_dimension(vectors, None)
    if dim is None:
        return 0
    missing = [cid for cid in vectors if cid not in rids]
    known = dict(rids)
    if missing:
        found = conn.execute(
            "SELECT id, rid FROM chunks WHERE repo = ? AND id IN (SELECT value FROM json_each(?))",
            (repo, json.dumps(missing)),
        ).fetchall()
        known.update(found)
        unknown = [cid for cid in missing if cid not in known]
        if unknown:
            raise StoreError(detail=f"{len(unknown)} vectors name no chunk, e.g. {unknown[0]!r}")
    before = conn.total_changes
    conn.executemany(
        _VECTOR_UPSERT, ((known[cid], dim, encode(vec)) for cid, vec in vectors.items())
    )
    changed = conn.total_changes - before
    other = conn.execute(
        "SELECT dim FROM vectors WHERE dim < ? OR dim > ? LIMIT 1", (dim, dim)
    ).fetchone()
    if other is not None:
        common_dimension(vectors, int(other[0]))  # raises: the index would mix dimensions
    return changed


def vector_generation(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT value FROM meta WHERE key = 'vector_generation'").fetchone()
    return int(row[0])


def bump_vector_generation(conn: sqlite3.Connection) -> None:
    """Tell every reader, in any process, that the stored vectors changed.

    A counter in the file, bumped in the writer's own transaction, is seen by
    every connection; `PRAGMA data_version` would miss this connection's own writes.
    """
    conn.execute(
        "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vector_generation'"
    )


@dataclass(frozen=True)
class VectorSnapshot:
    """Every stored vector of one dimension, rows grouped by repository."""

    generation: int
    dim: int
    matrix: Matrix  # (n, dim)
    rids: npt.NDArray[np.int64]  # chunk rowid of each row
    slices: Mapping[str, tuple[int, int]]  # repo -> [start, stop) rows

    def top(self, query: Matrix, repos: frozenset[str] | None, k: int) -> list[tuple[int, float]]:
        """(chunk rowid, inner product) of the best `k` rows in scope, best first."""
        names = self.slices if repos is None else [r for r in repos if r in self.slices]
        parts = [self.slices[name] for name in names]
        if not parts or k <= 0:
            return []
        scores = np.concatenate([self.matrix[a:b] @ query for a, b in parts])
        rows = np.concatenate([np.arange(a, b) for a, b in parts])
        best = np.argpartition(-scores, k - 1)[:k] if k < scores.size else np.arange(scores.size)
        best = best[np.argsort(-scores[best], kind="stable")]
        return [(int(self.rids[rows[i]]), float(scores[i])) for i in best]


def load_snapshot(conn: sqlite3.Connection, generation: int, dim: int) -> VectorSnapshot:
    """Read every vector of `dim` dimensions (call inside a read transaction)."""
    count = conn.execute("SELECT count(*) FROM vectors WHERE dim = ?", (dim,)).fetchone()[0]
    matrix = np.empty((count, dim), dtype=np.float32)
    rids = np.empty(count, dtype=np.int64)
    slices: dict[str, tuple[int, int]] = {}
    rows = conn.execute(
        "SELECT c.repo, v.rid, v.data FROM vectors v JOIN chunks c ON c.rid = v.rid"
        " WHERE v.dim = ? ORDER BY c.repo, v.rid",
        (dim,),
    )
    i = 0
    for repo, rid, data in rows:
        if i == count:
            break
        matrix[i] = np.frombuffer(data, dtype="<f4", count=dim)
        rids[i] = rid
        start, _ = slices.get(repo, (i, i))
        slices[repo] = (start, i + 1)
        i += 1
    # Vectors of chunks that no longer exist would be skipped by the join; keep shapes honest.
    return VectorSnapshot(generation, dim, matrix[:i], rids[:i], slices)


class VectorCache:
    """The latest snapshot, shared by all threads; reloaded when the generation changes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._snapshot: VectorSnapshot | None = None

    def get(self, conn: sqlite3.Connection, generation: int, dim: int) -> VectorSnapshot:
        snap = self._snapshot
        if snap is not None and snap.generation == generation and snap.dim == dim:
            return snap
        with self._lock:
            snap = self._snapshot
            if snap is None or snap.generation != generation or snap.dim != dim:
                snap = load_snapshot(conn, generation, dim)
                log.debug("loaded %d vectors of %d dimensions", len(snap.rids), dim)
                self._snapshot = snap
            return snap

    def clear(self) -> None:
        self._snapshot = None
