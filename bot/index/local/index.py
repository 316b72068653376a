"""LocalIndex: the embedded index in one SQLite file (in-memory BM25 + numpy vectors).

Searches return chunks from a bounded in-memory cache (`rowcache`) when they
can, and file hits need no query at all (the engine knows every file's path).

The file itself (a connection per thread, transactions, damage set aside and
rebuilt) is `indexfile.IndexFile`. Reads that need several statements run in one
read transaction, i.e. one snapshot.
"""

from __future__ import annotations

import json
import logging
import math
import sqlite3
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np

from bot.errors import StoreError
from bot.index.base import FIELDS, ChangeSet, IndexStats, Rebuild, TermStats
from bot.index.local import bm25, recovery, rowcache, schema
from bot.index.local.indexfile import IndexFile
from bot.index.local.lexical import EngineCache, Weights, field_weights, query_hashes
from bot.index.local.segfiles import SegmentFiles
from bot.index.local.segwrite import SegmentWriter
from bot.index.local.termcounts import term_hash
from bot.index.local.vectors import VectorCache, vector_generation
from bot.models import Chunk, FileEntry, FileHit, Hit, RepoState

log = logging.getLogger(__name__)

# Queries on some fields the retriever runs on every question: their views are kept on disk.
_VIEWS = (("path", "symbol"), ("path",))


def _weight(name: str, value: float) -> float:
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


class LocalIndex:
    """The Index protocol over one SQLite file; safe to share between threads."""

    def __init__(
        self,
        path: Path,
        *,
        path_weight: float = 2.0,
        symbol_weight: float = 3.0,
        header_weight: float = 1.5,
        body_weight: float = 1.0,
        file_path_weight: float = 2.0,
        file_body_weight: float = 1.0,
        busy_timeout: float = 30.0,
        on_damage: Callable[[], None] | None = None,
    ) -> None:
        self.path = Path(path)
        weights = (path_weight, symbol_weight, header_weight, body_weight)
        names = [f"{f}_weight" for f in FIELDS]
        self._chunk_weights = tuple(_weight(n, w) for n, w in zip(names, weights, strict=True))
        file_weights = (
            _weight("file_path_weight", file_path_weight),
            _weight("file_body_weight", file_body_weight),
        )
        views = tuple(field_weights(FIELDS, self._chunk_weights, fields) for fields in _VIEWS)
        self._weights = Weights(self._chunk_weights, file_weights, views)
        self._lexical = EngineCache(self._weights)  # for close() if opening fails; replaced below
        self._vectors = VectorCache()
        self._rows = rowcache.ChunkCache()
        self._segment_writer = SegmentWriter(self._persist)
        self.segments_deferred = self._segment_writer.deferred  # see segwrite.py
        self._file = IndexFile(
            self.path, busy_timeout=busy_timeout, opened=self._opened, damaged=on_damage
        )

    def _opened(self, uid: str) -> None:
        """The file was (re)opened: caches of another file's rows go."""
        self._segments = SegmentFiles(self.path.with_name(self.path.name + ".segments"), uid)
        self._lexical = EngineCache(self._weights, self._segments)
        self._vectors.clear()
        self._rows.clear()

    @property
    def on_damage(self) -> Callable[[], None] | None:
        """Called once the file was found damaged, set aside and started afresh."""
        return self._file.damaged

    @on_damage.setter
    def on_damage(self, hook: Callable[[], None] | None) -> None:
        self._file.damaged = hook

    def rebuilds(self) -> list[Rebuild]:
        """Repositories this (new) file awaits after damage; [] for a file that is whole."""
        return self._file.rebuilds()

    def verify(self) -> bool:
        """The whole file checked (`PRAGMA quick_check`); False, with it set aside for a
        rebuild, when it is damaged."""
        return self._file.verify()

    def _read(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._file.read()

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._file.write()

    def _query(self, sql: str, args: Sequence[object] = ()) -> list[Any]:
        return self._file.query(sql, args)

    # -- writes --------------------------------------------------------------

    def apply(self, change: ChangeSet) -> None:
        try:
            with self._write() as conn:
                schema.write_change(conn, change)
                recovery.done(conn, change.repo)
        except StoreError:
            raise
        except Exception as exc:
            raise StoreError(detail=f"{type(exc).__name__}: {exc}") from exc
        log.debug("applied change set for %s", change.repo)
        self._file.remember_sources(self.repo_states())
        self._segment_writer.committed(change.repo)

    def _persist(self, repo: str) -> None:
        """Write `repo`'s segment file (by its committed stamp); if it is not, readers build it."""
        try:
            with self._read() as conn:
                self._lexical.persist(conn, repo)
        except (StoreError, ValueError) as exc:  # the rows are in; the file is only a cache
            log.warning("segment file of %s not written: %s", repo, exc)

    def remove_repo(self, repo: str) -> None:
        with self._write() as conn:
            schema.delete_repo(conn, repo)
            recovery.done(conn, repo)
        self._segments.remove(repo)  # after the commit: until then it still answers
        self._file.remember_sources(self.repo_states())
        log.info("removed repository %s from the index", repo)

    # -- reads ---------------------------------------------------------------

    def repo_states(self) -> list[RepoState]:
        rows = self._query(
            "SELECT name, source, branch, commit_sha, indexed_at, web_url, files, chunks"
            " FROM repos ORDER BY name"
        )
        return [_repo_state(row) for row in rows]

    def manifest(self, repo: str) -> dict[str, FileEntry]:
        rows = self._query(
            "SELECT path, blob, language, chunk_ids FROM files WHERE repo = ?", (repo,)
        )
        return {
            path: FileEntry(path, blob, lang, tuple(json.loads(ids)))
            for path, blob, lang, ids in rows
        }

    def chunks_of(self, repo: str, path: str) -> list[Chunk]:
        rows = self._query(
            f"SELECT {rowcache.CHUNK_COLUMNS} FROM chunks c WHERE c.repo = ? AND c.path = ?"
            " ORDER BY c.start_line, c.end_line, c.rid",
            (repo, path),
        )
        return [rowcache.chunk_of_row(row) for row in rows]

    def ids_by_prefix(self, prefix: str) -> list[str]:
        upper = prefix_upper_bound(prefix)
        if upper is None:
            rows = self._query("SELECT id FROM chunks WHERE id >= ? ORDER BY id", (prefix,))
        else:
            rows = self._query(
                "SELECT id FROM chunks WHERE id >= ? AND id < ? ORDER BY id", (prefix, upper)
            )
        return [row[0] for row in rows]

    def lexical(
        self,
        terms: Sequence[str],
        *,
        repos: frozenset[str] | None,
        k: int,
        fields: Sequence[str] | None = None,
    ) -> list[Hit]:
        _check_fields(fields)
        if _empty(repos, k) or (fields is not None and not fields):
            return []
        hashes = query_hashes(terms)
        if hashes.size == 0:
            return []
        chosen = None
        if fields is not None and set(fields) != set(FIELDS):
            chosen = field_weights(FIELDS, self._chunk_weights, fields)

        def search() -> list[Hit]:
            with self._read() as conn:  # one snapshot: the engine's rowids are the rows fetched
                engine = self._lexical.get(conn)
                best = bm25.search(engine.chunks, repos, hashes, k, chosen)
                chunks = self._chunks(conn, [rid for rid, _ in best])
            return [Hit(chunks[rid], score) for rid, score in best if rid in chunks]

        return self._lexical.rebuilding_damaged(search)

    def files_lexical(
        self, terms: Sequence[str], *, repos: frozenset[str] | None, k: int
    ) -> list[FileHit]:
        hashes = query_hashes(terms)
        if hashes.size == 0 or _empty(repos, k):
            return []

        def search() -> list[FileHit]:
            with self._read() as conn:  # the engine knows every file's path: no other query
                engine = self._lexical.get(conn)
            best = bm25.ranked(engine.files, repos, hashes, k)
            where = [(repo, engine.paths[repo].get(fid), score) for repo, fid, score in best]
            return [FileHit(repo, path, score) for repo, path, score in where if path is not None]

        return self._lexical.rebuilding_damaged(search)

    def term_stats(self, tokens: Sequence[str], *, repos: frozenset[str] | None) -> TermStats:
        distinct = list(dict.fromkeys(tokens))
        if repos is not None and not repos:
            return TermStats(0, dict.fromkeys(distinct, 0))
        hashes = np.fromiter(map(term_hash, distinct), dtype=np.uint64, count=len(distinct))
        with self._read() as conn:
            engine = self._lexical.get(conn)
        documents, df = bm25.frequencies(engine.chunks, repos, hashes)
        return TermStats(documents, dict(zip(distinct, df.tolist(), strict=True)))

    def dense(self, vector: Sequence[float], *, repos: frozenset[str] | None, k: int) -> list[Hit]:
        query = np.asarray(vector, dtype=np.float32)
        if query.ndim != 1 or query.size == 0 or not np.isfinite(query).all():
            raise ValueError("the query vector must be a non-empty list of finite numbers")
        if _empty(repos, k):
            return []
        with self._read() as conn:
            stored = conn.execute("SELECT dim FROM vectors LIMIT 1").fetchone()
            if stored is None:
                return []
            if stored[0] != query.size:
                log.warning(
                    "query vector has %d dimensions, the index %d: reindex after changing "
                    "the embedding model",
                    query.size,
                    stored[0],
                )
                return []
            snapshot = self._vectors.get(conn, vector_generation(conn), int(query.size))
            best = snapshot.top(query, repos, k)
            chunks = self._chunks(conn, [rid for rid, _ in best])
        return [Hit(chunks[rid], score) for rid, score in best if rid in chunks]

    def _chunks(self, conn: sqlite3.Connection, rids: Sequence[int]) -> dict[int, Chunk]:
        """Chunks by rowid as of the snapshot `conn` reads, from memory when they are there."""
        at = rowcache.generation(conn)
        return self._rows.get(at, rids, lambda todo: rowcache.load_chunks(conn, todo))

    def stats(self) -> IndexStats:
        with self._read() as conn:
            counts = [
                int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
                for table in ("repos", "files", "chunks", "vectors")
            ]
        size = 0
        for suffix in ("", "-wal"):
            try:
                size += Path(f"{self.path}{suffix}").stat().st_size
            except FileNotFoundError:
                continue
        repos, files, chunks, vectors = counts
        return IndexStats(repos, files, chunks, vectors, size)

    # -- lifecycle -----------------------------------------------------------

    def close(self) -> None:
        """Close every connection; later calls raise StoreError. Safe to call twice."""
        file = getattr(self, "_file", None)
        if file is not None:
            file.close()
        self._vectors.clear()
        self._lexical.clear()
        self._rows.clear()

    def __enter__(self) -> LocalIndex:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _empty(repos: frozenset[str] | None, k: int) -> bool:
    """True when the answer is [] whatever is stored: no results wanted or nothing in scope."""
    return k <= 0 or (repos is not None and not repos)


def _repo_state(row: Sequence[Any]) -> RepoState:
    name, source, branch, commit, indexed_at, web_url, files, chunks = row
    at = datetime.fromisoformat(indexed_at).astimezone(UTC)
    return RepoState(name, source, branch, commit, at, web_url, files, chunks)


def _check_fields(fields: Sequence[str] | None) -> None:
    unknown = set(fields or ()) - set(FIELDS)
    if unknown:
        raise ValueError(f"unknown lexical fields {sorted(unknown)}; expected some of {FIELDS}")


def prefix_upper_bound(prefix: str) -> str | None:
    """The least string above every string that starts with `prefix` (None: no bound).

    UTF-8 byte order is code point order, so bumping the last code point works
    with SQLite's BINARY collation.
    """
    chars = list(prefix)
    while chars:
        point = ord(chars.pop()) + 1
        if 0xD800 <= point <= 0xDFFF:  # surrogates cannot be encoded; skip past them
            point = 0xE000
        if point <= 0x10FFFF:
            return "".join(chars) + chr(point)
    return None
