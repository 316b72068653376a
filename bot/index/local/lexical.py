"""LocalIndex's lexical side: query terms to hashes, and the BM25 segments kept in memory.

Every write that changes a repository's chunks or files bumps the file's
`lexical_generation` and stamps that repository with the new value, in the
writer's own transaction (`touch`). A reader compares the generation it sees in
its snapshot with the engine's; on a change it rebuilds only the segments whose
stamp moved, in that same snapshot, so rowids in the engine always match the
rows it then fetches. Writes by other processes are noticed the same way.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

import numpy as np

from bot.errors import StoreError
from bot.index.local import bm25
from bot.index.local.segfiles import PathTable, RepoSegments, SegmentFiles
from bot.index.local.termcounts import DAMAGED, term_hash

log = logging.getLogger(__name__)
_T = TypeVar("_T")

MAX_TERMS = 128  # more terms only slow the query down
MAX_TERM_CHARS = 256
_TOKEN = re.compile(r"\w+")
_GENERATION = "SELECT value FROM meta WHERE key = 'lexical_generation'"


def query_hashes(terms: Sequence[str]) -> bm25.Hashes:
    """The hashes of the tokens of the first MAX_TERMS usable terms.

    A term is lower-cased and split at anything but letters, digits and `_`
    (as the index's tokens are), so operators or quotes in user text never
    mean anything; a term of several words matches any of them.
    """
    tokens: dict[int, None] = {}
    used = 0
    for term in terms:
        hashes = _term_hashes(term) if len(term) <= MAX_TERM_CHARS else ()
        if not hashes:
            continue
        tokens.update(dict.fromkeys(hashes))
        used += 1
        if used == MAX_TERMS:
            log.debug("query cut to its first %d terms", MAX_TERMS)
            break
    return np.fromiter(tokens, dtype=np.uint64, count=len(tokens))


@lru_cache(maxsize=50_000)
def _term_hashes(term: str) -> tuple[int, ...]:
    """The hashes of a term's words; questions reuse the vocabulary, so this is cached."""
    return tuple(map(term_hash, _TOKEN.findall(term.lower())))


def field_weights(
    names: Sequence[str], weights: Sequence[float], fields: Sequence[str]
) -> tuple[float, ...]:
    """The weights of a query on some fields: each field's weight, 0 for those left out."""
    return tuple(w if f in fields else 0.0 for f, w in zip(names, weights, strict=True))


def generation(conn: sqlite3.Connection) -> int:
    row = conn.execute(_GENERATION).fetchone()
    if row is None:
        raise StoreError(DAMAGED, detail="no lexical_generation in meta")
    return int(row[0])


def touch(conn: sqlite3.Connection, repo: str) -> None:
    """Record, in the caller's write transaction, that `repo`'s lexical rows changed."""
    conn.execute(
        "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'lexical_generation'"
    )
    conn.execute(
        "INSERT OR REPLACE INTO lexical_segments (repo, generation) VALUES (?, ?)",
        (repo, generation(conn)),
    )


def forget(conn: sqlite3.Connection, repo: str) -> None:
    """Record that `repo` is gone (inside the caller's write transaction)."""
    conn.execute(
        "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'lexical_generation'"
    )
    conn.execute("DELETE FROM lexical_segments WHERE repo = ?", (repo,))


@dataclass(frozen=True, slots=True)
class Weights:
    """Default field weights of chunk and file documents, and the chunk views kept on disk."""

    chunk: tuple[float, ...]
    file: tuple[float, ...]
    views: tuple[tuple[float, ...], ...] = ()  # field weights of the queries on some fields

    @property
    def key(self) -> tuple[tuple[float, ...], tuple[float, ...]]:
        return self.chunk, self.file


@dataclass(frozen=True, slots=True)
class Engine:
    """Every repository's segments at one generation; immutable."""

    generation: int
    stamps: Mapping[str, int]
    chunks: Mapping[str, bm25.Segment]
    files: Mapping[str, bm25.Segment]
    paths: Mapping[str, PathTable]  # repo -> file rowid -> path


class EngineCache:
    """The latest engine, shared by all threads; updated in part when the generation moves.

    A repository's segments come from its segment file when one matches its stamp
    (`segfiles`), else they are built from its rows and the file is written.
    """

    def __init__(self, weights: Weights, files: SegmentFiles | None = None) -> None:
        self._weights = weights
        self._files = files
        self._lock = threading.Lock()
        self._engine: Engine | None = None
        self.built = 0  # repositories built from rows by this cache (tests read it)

    def get(self, conn: sqlite3.Connection) -> Engine:
        """The engine for the snapshot `conn` is reading (call inside a read transaction)."""
        current = generation(conn)
        engine = self._engine
        if engine is not None and engine.generation == current:
            return engine
        with self._lock:
            engine = self._engine
            if engine is None or engine.generation != current:
                engine = self._load(conn, current, engine)
                self._engine = engine
            return engine

    def persist(self, conn: sqlite3.Connection, repo: str) -> None:
        """Write `repo`'s segment file for the snapshot `conn` reads, unless it is there."""
        if self._files is None:
            return
        row = conn.execute(
            "SELECT generation FROM lexical_segments WHERE repo = ?", (repo,)
        ).fetchone()
        if row is None or self._files.path(repo, int(row[0])).exists():
            return
        self._build(conn, repo, int(row[0]))

    def rebuilding_damaged(self, search: Callable[[], _T]) -> _T:
        """`search()`; a segment file that fails it is dropped and built again from the rows."""
        dropped: set[str] = set()
        while True:
            try:
                return search()
            except bm25.DamagedSegment as exc:
                if exc.name in dropped:
                    raise StoreError(DAMAGED, detail=str(exc)) from exc
                log.warning("segment of %s damaged; rebuilding it from the index rows", exc.name)
                dropped.add(exc.name)
                self.discard(exc.name)

    def discard(self, repo: str) -> None:
        """Forget a repository's segments and files (they were found damaged)."""
        with self._lock:
            self._engine = None
        if self._files is not None:
            self._files.remove(repo)

    def _load(self, conn: sqlite3.Connection, current: int, old: Engine | None) -> Engine:
        started = time.perf_counter()
        stamps = dict(conn.execute("SELECT repo, generation FROM lexical_segments"))
        chunks: dict[str, bm25.Segment] = {}
        files: dict[str, bm25.Segment] = {}
        paths: dict[str, PathTable] = {}
        opened = rebuilt = 0
        for repo, stamp in stamps.items():
            if old is not None and old.stamps.get(repo) == stamp:
                chunks[repo], files[repo] = old.chunks[repo], old.files[repo]
                paths[repo] = old.paths[repo]
                continue
            found = self._files.open(repo, stamp, self._weights.key) if self._files else None
            if found is None:
                found = self._build(conn, repo, stamp)
                rebuilt += 1
            else:
                opened += 1
            chunks[repo], files[repo], paths[repo] = found.chunks, found.files, found.paths
        if rebuilt and self._files is not None:  # rare: a good moment to drop what nothing needs
            self._files.sweep(stamps)
        log.debug(
            "lexical engine at generation %d: of %d repositories, %d opened, %d rebuilt, in %.3f s",
            current,
            len(stamps),
            opened,
            rebuilt,
            time.perf_counter() - started,
        )
        return Engine(current, stamps, chunks, files, paths)

    def _build(self, conn: sqlite3.Connection, repo: str, stamp: int) -> RepoSegments:
        """Today's way: the segments from the rows, then kept in a file for the next process."""
        chunks = _segment(conn, "chunks", "rid", repo, self._weights.chunk)
        for fields in self._weights.views:
            chunks.restricted(fields)
        files, paths = _file_segment(conn, repo, self._weights.file)
        found = RepoSegments(repo, stamp, chunks, files, PathTable.of(paths))
        self.built += 1
        if self._files is not None:
            self._files.write(found, self._weights.key)
        return found

    def clear(self) -> None:
        self._engine = None


def _segment(
    conn: sqlite3.Connection, table: str, rowid: str, repo: str, weights: Sequence[float]
) -> bm25.Segment:
    ids: list[int] = []
    sizes: list[int] = []
    packed = bytearray()  # row by row: the blobs are never held both apart and joined
    for rid, blob in conn.execute(f"SELECT {rowid}, terms FROM {table} WHERE repo = ?", (repo,)):
        ids.append(rid)
        sizes.append(len(blob))
        packed += blob
    return bm25.build_packed(ids, np.asarray(sizes, dtype=np.int64), packed, weights)


def _file_segment(
    conn: sqlite3.Connection, repo: str, weights: Sequence[float]
) -> tuple[bm25.Segment, dict[int, str]]:
    """The files' segment, and their paths: a file hit then needs no query."""
    rows = conn.execute("SELECT fid, path, terms FROM files WHERE repo = ?", (repo,)).fetchall()
    segment = bm25.build([r[0] for r in rows], [r[2] for r in rows], weights)
    return segment, {r[0]: r[1] for r in rows}
