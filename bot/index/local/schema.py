"""LocalIndex's SQLite file: schema, connection set-up, and the writes of a change set.

Lexical search needs no index inside SQLite: each chunk and file row stores its
term counts (`terms`, see `bot.index.local.termcounts`) and the BM25 engine in memory
(`bot.index.local.bm25`) is built from them. A write that changes a repository's
chunks or files stamps it (`bot.index.local.lexical.touch`) so readers rebuild just
that repository's segments.

Every write below runs inside the caller's `BEGIN IMMEDIATE` transaction and
keeps chunks, vectors and files in step; vector rows themselves are written by
`bot.index.local.vectors`, file rows by `bot.index.local.files`. New chunks are
tokenised, written and let go a batch at a time (in worker processes when there
are many and cores to spare, see `bot.runtime.parallel`), so memory stays flat
however large the change set.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC
from itertools import islice
from pathlib import Path

from bot.errors import StoreError
from bot.index.base import ChangeSet
from bot.index.local import lexical, rowcache
from bot.index.local.files import FileRows
from bot.index.local.migrate import migrate
from bot.index.local.termcounts import DAMAGED, ChunkText, chunk_text, texts_terms
from bot.index.local.vectors import bump_vector_generation, store_vectors
from bot.models import Chunk, RepoState
from bot.runtime.parallel import ordered_map

log = logging.getLogger(__name__)

SCHEMA_VERSION = 3  # 3: term counts of the tokens that know options (see migrate.py)
APPLICATION_ID = 0x63636974  # "ccit": marks the file as a codecite index
_NOT_OURS = "The index file belongs to another program; choose another path."

_DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE repos (
    name TEXT PRIMARY KEY, source TEXT NOT NULL, branch TEXT NOT NULL,
    commit_sha TEXT NOT NULL, indexed_at TEXT NOT NULL, web_url TEXT NOT NULL,
    files INTEGER NOT NULL, chunks INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE files (
    fid INTEGER PRIMARY KEY, repo TEXT NOT NULL, path TEXT NOT NULL, blob TEXT NOT NULL,
    language TEXT NOT NULL, chunk_ids TEXT NOT NULL, terms BLOB NOT NULL DEFAULT x'',
    UNIQUE (repo, path)
);
CREATE TABLE chunks (
    rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, repo TEXT NOT NULL, path TEXT NOT NULL,
    language TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
    kind TEXT NOT NULL, symbol TEXT NOT NULL, header TEXT NOT NULL, text TEXT NOT NULL,
    commit_sha TEXT NOT NULL, terms BLOB NOT NULL DEFAULT x''
);
CREATE INDEX chunks_by_file ON chunks (repo, path, start_line);
CREATE TABLE vectors (rid INTEGER PRIMARY KEY, dim INTEGER NOT NULL, data BLOB NOT NULL);
CREATE INDEX vectors_by_dim ON vectors (dim);
CREATE TABLE lexical_segments (repo TEXT PRIMARY KEY, generation INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO meta (key, value) VALUES ('vector_generation', '0');
INSERT INTO meta (key, value) VALUES ('lexical_generation', '0');
INSERT INTO meta (key, value) VALUES ('rows_generation', '0');
"""

_CHUNK_ATTRS = tuple(
    "repo path language start_line end_line kind symbol header text commit".split()
)
_IN_JSON = "IN (SELECT value FROM json_each(?))"
CHUNKS_PER_BATCH = 512  # new chunk rows written at once
TERMS_BATCH_CHARS = 256 << 10  # chunk text tokenised at once: its temporaries are ~5x that


def connect(path: Path, *, busy_timeout: float) -> sqlite3.Connection:
    """A connection in autocommit mode (we issue BEGIN ourselves) with our pragmas set."""
    conn = sqlite3.connect(
        str(path), timeout=busy_timeout, isolation_level=None, check_same_thread=False
    )
    try:
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA cache_size = -16000")  # 16 MB of page cache per connection
        conn.execute("PRAGMA temp_store = MEMORY")
    except sqlite3.Error:
        conn.close()
        raise
    return conn


def prepare(conn: sqlite3.Connection, *, busy_timeout: float = 30.0) -> None:
    """Switch to WAL and create, migrate or check the schema (safe when processes race)."""
    mode = _journal_mode_wal(conn, busy_timeout)
    if str(mode).lower() != "wal":
        log.warning("SQLite refused WAL mode (got %s); readers will wait for writers", mode)
    conn.execute("PRAGMA journal_size_limit = 67108864")  # trim the WAL to 64 MB after use
    conn.execute("BEGIN IMMEDIATE")
    try:
        _check_or_create(conn)
        rowcache.ensure_counter(conn)
        conn.execute(  # names this index in its segment files (see segfiles.py)
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('segments_uid', ?)",
            (uuid.uuid4().hex,),
        )
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise


def _journal_mode_wal(conn: sqlite3.Connection, busy_timeout: float) -> str:
    """`PRAGMA journal_mode = WAL`, retried while another connection holds the file.

    SQLite answers "database is locked" to this pragma at once, without its busy
    handler, when openers race on a new file; the other statements wait by themselves.
    """
    deadline = time.monotonic() + busy_timeout
    pause = 0.005
    while True:
        try:
            return str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.2)


def segments_uid(conn: sqlite3.Connection) -> str:
    row = conn.execute("SELECT value FROM meta WHERE key = 'segments_uid'").fetchone()
    if row is None:
        raise StoreError(DAMAGED, detail="no segments_uid in meta")
    return str(row[0])


def rollback(conn: sqlite3.Connection) -> None:
    """Roll back if a transaction is open (SQLite may already have rolled it back)."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def _check_or_create(conn: sqlite3.Connection) -> None:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    if version == 0:
        if conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()[0] or app_id:
            raise StoreError(_NOT_OURS)
        for statement in _DDL.split(";"):  # not executescript: it would COMMIT first
            if statement.strip():
                conn.execute(statement)
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        return
    if app_id != APPLICATION_ID:
        raise StoreError(_NOT_OURS)
    if version > SCHEMA_VERSION:
        raise StoreError("The index was written by a newer codecite; upgrade codecite to read it.")
    if version < SCHEMA_VERSION:
        migrate(conn, version)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


# -- row operations ----------------------------------------------------------------

_CHUNK_INSERT = (
    "INSERT INTO chunks (rid, id, repo, path, language, start_line, end_line, kind, symbol,"
    " header, text, commit_sha, terms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def delete_chunk_rows(conn: sqlite3.Connection, rids: Sequence[int]) -> int:
    """Delete chunks (and their vectors) by rowid; returns how many vectors went."""
    before = conn.total_changes
    conn.executemany("DELETE FROM vectors WHERE rid = ?", ((rid,) for rid in rids))
    vectors = conn.total_changes - before
    conn.executemany("DELETE FROM chunks WHERE rid = ?", ((rid,) for rid in rids))
    return vectors


def delete_repo(conn: sqlite3.Connection, repo: str) -> None:
    """Every row of one repository: chunks, vectors, files and its state."""
    rids = [r[0] for r in conn.execute("SELECT rid FROM chunks WHERE repo = ?", (repo,))]
    vectors = delete_chunk_rows(conn, rids)
    conn.execute("DELETE FROM files WHERE repo = ?", (repo,))
    conn.execute("DELETE FROM repos WHERE name = ?", (repo,))
    lexical.forget(conn, repo)
    rowcache.bump(conn)
    if vectors:
        bump_vector_generation(conn)


def _next_rowid(conn: sqlite3.Connection, table: str, column: str) -> int:
    """The first free rowid; ours alone inside the write transaction."""
    return int(conn.execute(f"SELECT max({column}) FROM {table}").fetchone()[0] or 0) + 1


# -- applying a change set -----------------------------------------------------------


def write_change(conn: sqlite3.Connection, change: ChangeSet) -> None:
    """Deletes first, then upserts (an id in both ends up present), then files and state."""
    _check_change(change)
    repo = change.repo
    gone = _rowids(conn, "chunks", repo, "id", change.deletes)
    gone += _rowids(conn, "chunks", repo, "path", change.removed_paths)
    vectors_changed = delete_chunk_rows(conn, gone)
    files_gone = _rowids(conn, "files", repo, "path", change.removed_paths)
    conn.executemany("DELETE FROM files WHERE fid = ?", ((fid,) for fid in files_gone))
    files = FileRows.plan(conn, repo, change.files)
    upserted = _upsert_chunks(conn, repo, change.upserts, files, change.terms)
    vectors_changed += upserted.vectors_dropped
    vectors_changed += store_vectors(conn, repo, upserted.rids, change.vectors)
    files_changed = files.finish()
    _put_state(conn, change.state)
    if gone or files_gone or upserted.inserted or files_changed:
        lexical.touch(conn, repo)
    if gone or upserted.inserted or upserted.refreshed:
        rowcache.bump(conn)  # chunks cached by readers are stale
    if vectors_changed:
        bump_vector_generation(conn)


def _check_change(change: ChangeSet) -> None:
    if change.state.name != change.repo:
        raise StoreError(detail=f"state is for {change.state.name!r}, not {change.repo!r}")
    strays = {c.repo for c in change.upserts} - {change.repo}
    if strays:
        raise StoreError(detail=f"change set for {change.repo!r} holds chunks of {sorted(strays)}")


def _rowids(
    conn: sqlite3.Connection, table: str, repo: str, column: str, keys: Sequence[str]
) -> list[int]:
    """Rowids of the rows of `repo` whose `column` is one of `keys`."""
    if not keys:
        return []
    rowid = "rid" if table == "chunks" else "fid"
    rows = conn.execute(
        f"SELECT {rowid} FROM {table} WHERE repo = ? AND {column} {_IN_JSON}",
        (repo, json.dumps(list(keys))),
    )
    return [row[0] for row in rows]


@dataclass(frozen=True, slots=True)
class _Upserted:
    rids: dict[str, int]  # chunk id -> rowid, for every upserted chunk
    inserted: int  # rows written anew
    vectors_dropped: int
    refreshed: int  # rows kept whose metadata (lines, kind, commit...) was rewritten


def _upsert_chunks(
    conn: sqlite3.Connection,
    repo: str,
    chunks: Sequence[Chunk],
    files: FileRows,
    counted: Mapping[str, bytes],
) -> _Upserted:
    """Insert new chunks, refresh metadata of known ones; new chunks' counts go to `files`."""
    latest = {c.id: c for c in chunks}
    existing = conn.execute(
        f"SELECT id, rid, repo, path, symbol, header, text FROM chunks WHERE id {_IN_JSON}",
        (json.dumps(list(latest)),),
    ).fetchall()
    rids: dict[str, int] = {}
    stale: list[int] = []
    for cid, rid, old_repo, path, symbol, header, text in existing:
        if old_repo != repo:
            raise StoreError(detail=f"chunk id {cid!r} already belongs to repository {old_repo!r}")
        chunk = latest[cid]
        if (path, symbol, header, text) == (chunk.path, chunk.symbol, chunk.header, chunk.text):
            rids[cid] = rid
        else:
            stale.append(rid)  # same id, other content: replace the row entirely
    dropped = delete_chunk_rows(conn, stale)
    refreshed = len(rids)
    conn.executemany(
        "UPDATE chunks SET language = ?, start_line = ?, end_line = ?, kind = ?, commit_sha = ?"
        " WHERE rid = ?",
        [
            (c.language, c.start_line, c.end_line, c.kind, c.commit, rids[c.id])
            for c in (latest[cid] for cid in rids)
        ],
    )
    fresh = [(cid, c) for cid, c in latest.items() if cid not in rids]
    _insert_chunks(conn, fresh, rids, files, counted)
    return _Upserted(rids, len(fresh), dropped, refreshed)


def _insert_chunks(
    conn: sqlite3.Connection,
    fresh: Sequence[tuple[str, Chunk]],
    rids: dict[str, int],
    files: FileRows,
    known: Mapping[str, bytes],
) -> None:
    """Tokenise, write and let go of new chunks a batch at a time; their rowids go to `rids`."""
    rowid = _next_rowid(conn, "chunks", "rid")
    counted = zip(fresh, _fresh_terms(fresh, known), strict=True)
    while batch := list(islice(counted, CHUNKS_PER_BATCH)):
        rids.update((cid, rowid + i) for i, ((cid, _), _) in enumerate(batch))
        rowid += len(batch)
        conn.executemany(
            _CHUNK_INSERT,
            [(rids[cid], cid, *_chunk_fields(c), terms) for (cid, c), terms in batch],
        )
        for (cid, _), terms in batch:
            files.chunk_written(cid, terms)
        files.flush()


def _fresh_terms(fresh: Sequence[tuple[str, Chunk]], known: Mapping[str, bytes]) -> Iterator[bytes]:
    """Term counts of new chunks, in order: those `known` (counted ahead by the ingest) as
    given, the rest counted here, over worker processes when there are many."""
    texts = (chunk_text(c) for cid, c in fresh if cid not in known)
    counted = ordered_map(texts_terms, texts, weight=_text_size, batch_weight=TERMS_BATCH_CHARS)
    for cid, _ in fresh:
        yield known[cid] if cid in known else next(counted)


def _text_size(item: ChunkText) -> int:
    return len(item[3])


def _chunk_fields(c: Chunk) -> tuple[object, ...]:
    """The chunk's columns from `repo` to `commit_sha`, in table order."""
    return tuple(getattr(c, name) for name in _CHUNK_ATTRS)


def _put_state(conn: sqlite3.Connection, state: RepoState) -> None:
    at = state.indexed_at
    at = at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)
    conn.execute(
        "INSERT OR REPLACE INTO repos (name, source, branch, commit_sha, indexed_at, web_url,"
        " files, chunks) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            state.name,
            state.source,
            state.branch,
            state.commit,
            at.isoformat(),
            state.web_url,
            state.files,
            state.chunks,
        ),
    )
