"""PineconeIndex's local state (`stores.pinecone_state`): one SQLite file under CODECITE_HOME.

Pinecone holds the chunks and their vectors. This file holds what Pinecone is
poor at answering quickly or exactly: repository states, the manifest (path ->
blob and chunk ids), the token dimensions of every chunk and file (to keep
document-frequency statistics for query IDF), and a journal of ids an apply is
about to write (so an interrupted apply's strays are found and removed by the
next one). Everything here can be rebuilt from Pinecone (`PineconeIndex.rebuild_state`).

Writes for one repository happen in one transaction, after Pinecone has
accepted the data: the state never claims more than Pinecone holds.
"""

from __future__ import annotations

import json
import sqlite3
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from bot.errors import StoreError
from bot.models import FileEntry, RepoState
from bot.store.records import ChunkRow, CorpusStats, Counts, FileRow
from bot.store.sqlite import SqliteFile

__all__ = [
    "CHUNK_LEVEL",
    "FILE_LEVEL",
    "SCHEMA_VERSION",
    "ChunkRow",
    "Counts",
    "FileRow",
    "PineconeState",
    "rebuild_wanted",
]

CHUNK_LEVEL, FILE_LEVEL = "chunk", "file"
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS repos (
    name TEXT PRIMARY KEY, source TEXT NOT NULL, branch TEXT NOT NULL, commit_sha TEXT NOT NULL,
    indexed_at TEXT NOT NULL, web_url TEXT NOT NULL, files INTEGER NOT NULL,
    chunks INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    repo TEXT NOT NULL, path TEXT NOT NULL, blob TEXT NOT NULL, language TEXT NOT NULL,
    chunk_ids TEXT NOT NULL, terms BLOB NOT NULL, PRIMARY KEY (repo, path));
CREATE TABLE IF NOT EXISTS chunks (
    id TEXT PRIMARY KEY, repo TEXT NOT NULL, path TEXT NOT NULL, dense INTEGER NOT NULL,
    terms BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_by_file ON chunks (repo, path);
CREATE TABLE IF NOT EXISTS df (
    repo TEXT NOT NULL, level TEXT NOT NULL, term INTEGER NOT NULL, n INTEGER NOT NULL,
    PRIMARY KEY (repo, level, term)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS pending (
    repo TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (repo, id)) WITHOUT ROWID;
"""


def pack_terms(terms: Iterable[int]) -> bytes:
    return array("I", sorted(set(terms))).tobytes()


def unpack_terms(blob: bytes) -> array[int]:
    out = array("I")
    out.frombytes(blob)
    return out


def rebuild_wanted(path: Path) -> bool:
    """Whether the state file at `path` was started afresh and awaits `replace_all`."""
    return _rebuild_marker(path).exists()


def _rebuild_marker(path: Path) -> Path:
    return path.with_name(f"{path.name}.rebuild")


def _prepare(db: sqlite3.Connection) -> None:
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version not in (0, SCHEMA_VERSION):
        raise StoreError(
            "The Pinecone state file is from another codecite version; delete it and "
            "rebuild it from Pinecone.",
            detail=f"version {version}",
        )
    db.execute("PRAGMA synchronous=NORMAL")
    db.executescript(_SCHEMA)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


class PineconeState:
    """Thread-safe: one connection, one lock; every public method is one transaction."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = SqliteFile(
            path,
            "Pinecone state",
            _prepare,
            autocommit=True,
            remedy="it is rebuilt from Pinecone when codecite next starts",
            on_reset=lambda: _rebuild_marker(path).touch(),
            always_check=True,  # damage found at start is rebuilt at start (bot.wiring)
        )

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._file.transaction() as db:  # commits at the end, rolls back on error
            db.execute("BEGIN IMMEDIATE")
            yield db

    def close(self) -> None:
        self._file.close()  # idempotent

    def rebuild_wanted(self) -> bool:
        """Whether this state was started afresh and awaits `replace_all`."""
        return rebuild_wanted(self.path)

    # --- reads -------------------------------------------------------------------------

    def repo_states(self) -> list[RepoState]:
        with self._tx() as db:
            rows = db.execute("SELECT * FROM repos ORDER BY name").fetchall()
        return [_repo_state(row) for row in rows]

    def manifest(self, repo: str) -> dict[str, FileEntry]:
        with self._tx() as db:
            rows = db.execute(
                "SELECT path, blob, language, chunk_ids FROM files WHERE repo = ? ORDER BY path",
                (repo,),
            ).fetchall()
        return {
            path: FileEntry(path, blob, language, tuple(json.loads(ids)))
            for path, blob, language, ids in rows
        }

    def file_chunk_ids(self, repo: str, path: str) -> list[str]:
        """Chunk ids the state knows for one file: its manifest list and its chunk rows."""
        with self._tx() as db:
            row = db.execute(
                "SELECT chunk_ids FROM files WHERE repo = ? AND path = ?", (repo, path)
            ).fetchone()
            rows = db.execute(
                "SELECT id FROM chunks WHERE repo = ? AND path = ?", (repo, path)
            ).fetchall()
        listed = json.loads(row[0]) if row is not None else []
        return list(dict.fromkeys([*listed, *(r[0] for r in rows)]))

    def repo_chunks(self, repo: str) -> dict[str, str]:
        """chunk id -> path, for every chunk of the repository Pinecone holds."""
        with self._tx() as db:
            rows = db.execute("SELECT id, path FROM chunks WHERE repo = ?", (repo,)).fetchall()
        return {cid: path for cid, path in rows}

    def pending(self, repo: str) -> list[str]:
        with self._tx() as db:
            return [r[0] for r in db.execute("SELECT id FROM pending WHERE repo = ?", (repo,))]

    def corpus_stats(
        self, level: str, terms: Sequence[int], repos: frozenset[str] | None
    ) -> CorpusStats:
        """Document count and document frequencies of `terms`, summed over the scope."""
        table = "chunks" if level == CHUNK_LEVEL else "files"
        scope, args = _scope_sql(repos)
        with self._tx() as db:
            docs = db.execute(f"SELECT COUNT(*) FROM {table} WHERE 1=1{scope}", args).fetchone()[0]
            df: dict[int, int] = {}
            if terms:
                marks = ",".join("?" * len(terms))
                rows = db.execute(
                    f"SELECT term, SUM(n) FROM df WHERE level = ? AND term IN ({marks}){scope}"
                    " GROUP BY term",
                    (level, *terms, *args),
                )
                df = {int(t): int(n) for t, n in rows}
        return CorpusStats(int(docs), df)

    def counts(self) -> Counts:
        with self._tx() as db:
            repos = db.execute("SELECT COUNT(*) FROM repos").fetchone()[0]
            files = db.execute("SELECT COUNT(*) FROM files").fetchone()[0]
            chunks, dense = db.execute(
                "SELECT COUNT(*), COALESCE(SUM(dense), 0) FROM chunks"
            ).fetchone()
        return Counts(int(repos), int(files), int(chunks), int(dense))

    def record_count(self) -> int:
        """Records this state expects Pinecone to hold: chunks, files and repo states."""
        c = self.counts()
        return c.chunks + c.files + c.repos

    # --- writes ------------------------------------------------------------------------

    def journal(self, repo: str, ids: Iterable[str]) -> None:
        """Remember ids about to be written, before writing them."""
        with self._tx() as db:
            db.executemany(
                "INSERT OR IGNORE INTO pending (repo, id) VALUES (?, ?)", ((repo, i) for i in ids)
            )

    def commit(
        self,
        state: RepoState,
        *,
        chunks: Sequence[ChunkRow],
        deleted: Iterable[str],
        files: Sequence[FileRow],
        removed_paths: Iterable[str],
    ) -> None:
        """Record one applied change set and the repository's new state."""
        repo = state.name
        with self._tx() as db:
            deltas: dict[str, Counter[int]] = {CHUNK_LEVEL: Counter(), FILE_LEVEL: Counter()}
            _drop_chunks(db, deleted, deltas[CHUNK_LEVEL])
            _add_chunks(db, chunks, deltas[CHUNK_LEVEL])
            for path in removed_paths:
                _drop_file(db, repo, path, deltas[FILE_LEVEL])
            for row in files:
                _drop_file(db, repo, row.path, deltas[FILE_LEVEL])
                _add_file(db, row, deltas[FILE_LEVEL])
            for level, delta in deltas.items():
                _apply_df(db, repo, level, delta)
            db.execute("DELETE FROM pending WHERE repo = ?", (repo,))
            _put_repo(db, state)

    def hide_repo(self, repo: str) -> None:
        with self._tx() as db:
            db.execute("DELETE FROM repos WHERE name = ?", (repo,))

    def remove_repo(self, repo: str) -> None:
        with self._tx() as db:
            for table in ("repos", "files", "chunks", "df", "pending"):
                column = "name" if table == "repos" else "repo"
                db.execute(f"DELETE FROM {table} WHERE {column} = ?", (repo,))

    def replace_all(
        self, states: Sequence[RepoState], files: Sequence[FileRow], chunks: Sequence[ChunkRow]
    ) -> None:
        """Swap the whole state for one rebuilt from Pinecone."""
        with self._tx() as db:
            for table in ("repos", "files", "chunks", "df", "pending"):
                db.execute(f"DELETE FROM {table}")
            deltas: dict[tuple[str, str], Counter[int]] = {}
            _add_chunks(db, chunks, None)
            for chunk in chunks:
                deltas.setdefault((chunk.repo, CHUNK_LEVEL), Counter()).update(set(chunk.terms))
            for row in files:
                _add_file(db, row, deltas.setdefault((row.repo, FILE_LEVEL), Counter()))
            for (repo, level), delta in deltas.items():
                _apply_df(db, repo, level, delta)
            for state in states:
                _put_repo(db, state)
        _rebuild_marker(self.path).unlink(missing_ok=True)


def _scope_sql(repos: frozenset[str] | None) -> tuple[str, tuple[str, ...]]:
    if repos is None:
        return "", ()
    names = tuple(sorted(repos))
    return f" AND repo IN ({','.join('?' * len(names))})", names


def _drop_chunks(db: sqlite3.Connection, ids: Iterable[str], delta: Counter[int]) -> None:
    for cid in dict.fromkeys(ids):
        row = db.execute("SELECT terms FROM chunks WHERE id = ?", (cid,)).fetchone()
        if row is not None:
            delta.subtract(unpack_terms(row[0]))
            db.execute("DELETE FROM chunks WHERE id = ?", (cid,))


def _add_chunks(
    db: sqlite3.Connection, chunks: Sequence[ChunkRow], delta: Counter[int] | None
) -> None:
    for chunk in chunks:
        known = db.execute("SELECT 1 FROM chunks WHERE id = ?", (chunk.id,)).fetchone()
        if known is None and delta is not None:
            delta.update(set(chunk.terms))
        db.execute(
            "INSERT INTO chunks (id, repo, path, dense, terms) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT (id) DO UPDATE SET dense = excluded.dense",
            (chunk.id, chunk.repo, chunk.path, int(chunk.dense), pack_terms(chunk.terms)),
        )


def _drop_file(db: sqlite3.Connection, repo: str, path: str, delta: Counter[int]) -> None:
    row = db.execute("SELECT terms FROM files WHERE repo = ? AND path = ?", (repo, path)).fetchone()
    if row is not None:
        delta.subtract(unpack_terms(row[0]))
        db.execute("DELETE FROM files WHERE repo = ? AND path = ?", (repo, path))


def _add_file(db: sqlite3.Connection, row: FileRow, delta: Counter[int]) -> None:
    delta.update(set(row.terms))
    db.execute(
        "INSERT INTO files (repo, path, blob, language, chunk_ids, terms)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (
            row.repo,
            row.path,
            row.blob,
            row.language,
            json.dumps(row.chunk_ids),
            pack_terms(row.terms),
        ),
    )


def _apply_df(db: sqlite3.Connection, repo: str, level: str, delta: Counter[int]) -> None:
    changes = [(repo, level, term, n) for term, n in delta.items() if n]
    db.executemany(
        "INSERT INTO df (repo, level, term, n) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (repo, level, term) DO UPDATE SET n = n + excluded.n",
        changes,
    )
    db.execute("DELETE FROM df WHERE repo = ? AND level = ? AND n <= 0", (repo, level))


def _put_repo(db: sqlite3.Connection, s: RepoState) -> None:
    db.execute(
        "INSERT OR REPLACE INTO repos VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            s.name,
            s.source,
            s.branch,
            s.commit,
            s.indexed_at.isoformat(),
            s.web_url,
            s.files,
            s.chunks,
        ),
    )


def _repo_state(row: tuple[str, str, str, str, str, str, int, int]) -> RepoState:
    name, source, branch, commit, indexed_at, web_url, files, chunks = row
    return RepoState(
        name, source, branch, commit, datetime.fromisoformat(indexed_at), web_url, files, chunks
    )
