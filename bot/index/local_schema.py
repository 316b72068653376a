"""LocalIndex's SQLite file: schema, connection set-up, and the writes of a change set.

Both FTS5 tables are contentless (`content=''`): their own copy of the tokens
would be the largest thing in the file. SQLite 3.40 deletes a contentless row
only when given the exact values it was indexed with, so each chunk and file
row keeps its FTS values zlib-compressed (`fts` column) and a delete replays
them. That stays exact even if the tokenizer changes between versions.

Every write below runs inside the caller's `BEGIN IMMEDIATE` transaction and
keeps chunks, chunks_fts and vectors (files and files_fts) in step; vector
rows themselves are written by `bot.index.vectors`.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import zlib
from collections.abc import Iterable, Sequence
from datetime import UTC
from pathlib import Path

from bot.errors import StoreError
from bot.index.base import FIELDS, ChangeSet
from bot.index.tokens import code_tokens, join, path_tokens
from bot.index.vectors import bump_vector_generation, store_vectors
from bot.models import Chunk, FileDoc, RepoState

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
APPLICATION_ID = 0x63636974  # "ccit": marks the file as a codecite index
FILE_FIELDS = ("path", "body")
_TOKENIZER = "unicode61 tokenchars '_'"
_SEP = "\x1f"  # never produced by the tokenizer
_NOT_OURS = "The index file belongs to another program; choose another path."

_DDL = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE repos (
    name TEXT PRIMARY KEY, source TEXT NOT NULL, branch TEXT NOT NULL,
    commit_sha TEXT NOT NULL, indexed_at TEXT NOT NULL, web_url TEXT NOT NULL,
    files INTEGER NOT NULL, chunks INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE files (
    fid INTEGER PRIMARY KEY, repo TEXT NOT NULL, path TEXT NOT NULL, blob TEXT NOT NULL,
    language TEXT NOT NULL, chunk_ids TEXT NOT NULL, fts BLOB NOT NULL, UNIQUE (repo, path)
);
CREATE TABLE chunks (
    rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, repo TEXT NOT NULL, path TEXT NOT NULL,
    language TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
    kind TEXT NOT NULL, symbol TEXT NOT NULL, header TEXT NOT NULL, text TEXT NOT NULL,
    commit_sha TEXT NOT NULL, fts BLOB NOT NULL
);
CREATE INDEX chunks_by_file ON chunks (repo, path, start_line);
CREATE INDEX chunks_scope ON chunks (rid, repo);
CREATE INDEX files_scope ON files (fid, repo, path);
CREATE TABLE vectors (rid INTEGER PRIMARY KEY, dim INTEGER NOT NULL, data BLOB NOT NULL);
CREATE INDEX vectors_by_dim ON vectors (dim);
CREATE VIRTUAL TABLE chunks_fts USING fts5(
    {", ".join(FIELDS)}, content='', tokenize="{_TOKENIZER}"
);
CREATE VIRTUAL TABLE files_fts USING fts5(
    {", ".join(FILE_FIELDS)}, content='', tokenize="{_TOKENIZER}"
);
INSERT INTO meta (key, value) VALUES ('vector_generation', '0');
"""

# Columns that rebuild a Chunk, in constructor order (alias `c` for chunks).
CHUNK_COLUMNS = (
    "c.repo, c.path, c.language, c.start_line, c.end_line, c.kind, c.symbol, c.header, c.text,"
    " c.commit_sha"
)
_CHUNK_ATTRS = tuple(
    "repo path language start_line end_line kind symbol header text commit".split()
)
_IN_JSON = "IN (SELECT value FROM json_each(?))"


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


def prepare(conn: sqlite3.Connection) -> None:
    """Switch to WAL and create or check the schema (safe when processes race to do it)."""
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        log.warning("SQLite refused WAL mode (got %s); readers will wait for writers", mode)
    conn.execute("PRAGMA journal_size_limit = 67108864")  # trim the WAL to 64 MB after use
    conn.execute("BEGIN IMMEDIATE")
    try:
        _check_or_create(conn)
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise


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
        raise StoreError("The index format is outdated; delete the index file and reindex.")


# -- FTS values ------------------------------------------------------------------


def chunk_fts_values(chunk: Chunk) -> tuple[str, ...]:
    """The four FTS columns of a chunk, in FIELDS order."""
    return (
        join(path_tokens(chunk.path)),
        join(code_tokens(chunk.symbol)),
        join(code_tokens(chunk.header)),
        join(code_tokens(chunk.text)),
    )


def file_fts_values(doc: FileDoc) -> tuple[str, ...]:
    return (join(path_tokens(doc.path)), join(code_tokens(doc.text)))


def pack(values: Sequence[str]) -> bytes:
    return zlib.compress(_SEP.join(values).encode("utf-8"), 1)


def unpack(blob: bytes, width: int) -> tuple[str, ...]:
    values = tuple(zlib.decompress(blob).decode("utf-8").split(_SEP))
    if len(values) != width:
        raise StoreError(detail=f"stored FTS values have {len(values)} fields, not {width}")
    return values


# -- row operations ----------------------------------------------------------------

_CHUNK_FTS_INSERT = f"INSERT INTO chunks_fts (rowid, {', '.join(FIELDS)}) VALUES (?, ?, ?, ?, ?)"
_CHUNK_FTS_DELETE = (
    f"INSERT INTO chunks_fts (chunks_fts, rowid, {', '.join(FIELDS)})"
    " VALUES ('delete', ?, ?, ?, ?, ?)"
)
_FILE_FTS_INSERT = "INSERT INTO files_fts (rowid, path, body) VALUES (?, ?, ?)"
_FILE_FTS_DELETE = "INSERT INTO files_fts (files_fts, rowid, path, body) VALUES ('delete', ?, ?, ?)"
_CHUNK_INSERT = (
    "INSERT INTO chunks (rid, id, repo, path, language, start_line, end_line, kind, symbol,"
    " header, text, commit_sha, fts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def delete_chunk_rows(conn: sqlite3.Connection, rows: Iterable[tuple[int, bytes]]) -> int:
    """Delete chunks given (rowid, packed FTS values); returns how many vectors went too."""
    rows = list(rows)
    width = len(FIELDS)
    conn.executemany(_CHUNK_FTS_DELETE, ((rid, *unpack(fts, width)) for rid, fts in rows))
    before = conn.total_changes
    conn.executemany("DELETE FROM vectors WHERE rid = ?", ((rid,) for rid, _ in rows))
    vectors = conn.total_changes - before
    conn.executemany("DELETE FROM chunks WHERE rid = ?", ((rid,) for rid, _ in rows))
    return vectors


def delete_file_rows(conn: sqlite3.Connection, rows: Iterable[tuple[int, bytes]]) -> None:
    """Delete files given (fid, packed FTS values)."""
    rows = list(rows)
    width = len(FILE_FIELDS)
    conn.executemany(_FILE_FTS_DELETE, ((fid, *unpack(fts, width)) for fid, fts in rows))
    conn.executemany("DELETE FROM files WHERE fid = ?", ((fid,) for fid, _ in rows))


def delete_repo(conn: sqlite3.Connection, repo: str) -> None:
    """Every row of one repository: chunks, vectors, files, their FTS rows and its state."""
    chunk_rows = conn.execute("SELECT rid, fts FROM chunks WHERE repo = ?", (repo,)).fetchall()
    vectors = delete_chunk_rows(conn, chunk_rows)
    delete_file_rows(conn, _rows(conn, "files", repo, "repo", [repo]))
    conn.execute("DELETE FROM repos WHERE name = ?", (repo,))
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
    vectors_changed = 0
    vectors_changed += delete_chunk_rows(conn, _rows(conn, "chunks", repo, "id", change.deletes))
    vectors_changed += _drop_paths(conn, repo, change.removed_paths)
    rids, dropped = _upsert_chunks(conn, repo, change.upserts)
    vectors_changed += dropped
    vectors_changed += store_vectors(conn, repo, rids, change.vectors)
    _put_files(conn, repo, change.files)
    _put_state(conn, change.state)
    if vectors_changed:
        bump_vector_generation(conn)


def _check_change(change: ChangeSet) -> None:
    if change.state.name != change.repo:
        raise StoreError(detail=f"state is for {change.state.name!r}, not {change.repo!r}")
    strays = {c.repo for c in change.upserts} - {change.repo}
    if strays:
        raise StoreError(detail=f"change set for {change.repo!r} holds chunks of {sorted(strays)}")


def _rows(
    conn: sqlite3.Connection, table: str, repo: str, column: str, keys: Sequence[str]
) -> list[tuple[int, bytes]]:
    """(rowid, fts) of the rows of `repo` whose `column` is one of `keys`."""
    if not keys:
        return []
    rowid = "rid" if table == "chunks" else "fid"
    return conn.execute(
        f"SELECT {rowid}, fts FROM {table} WHERE repo = ? AND {column} {_IN_JSON}",
        (repo, json.dumps(list(keys))),
    ).fetchall()


def _drop_paths(conn: sqlite3.Connection, repo: str, paths: Sequence[str]) -> int:
    vectors = delete_chunk_rows(conn, _rows(conn, "chunks", repo, "path", paths))
    delete_file_rows(conn, _rows(conn, "files", repo, "path", paths))
    return vectors


def _upsert_chunks(
    conn: sqlite3.Connection, repo: str, chunks: Sequence[Chunk]
) -> tuple[dict[str, int], int]:
    """Insert new chunks, refresh metadata of known ones; returns id -> rowid and vectors lost."""
    latest = {c.id: c for c in chunks}
    existing = conn.execute(
        f"SELECT id, rid, repo, path, symbol, header, text, fts FROM chunks WHERE id {_IN_JSON}",
        (json.dumps(list(latest)),),
    ).fetchall()
    rids: dict[str, int] = {}
    stale: list[tuple[int, bytes]] = []
    for cid, rid, old_repo, path, symbol, header, text, fts in existing:
        if old_repo != repo:
            raise StoreError(detail=f"chunk id {cid!r} already belongs to repository {old_repo!r}")
        chunk = latest[cid]
        if (path, symbol, header, text) == (chunk.path, chunk.symbol, chunk.header, chunk.text):
            rids[cid] = rid
        else:
            stale.append((rid, fts))  # same id, other content: replace the row entirely
    dropped = delete_chunk_rows(conn, stale)
    conn.executemany(
        "UPDATE chunks SET language = ?, start_line = ?, end_line = ?, kind = ?, commit_sha = ?"
        " WHERE rid = ?",
        [
            (c.language, c.start_line, c.end_line, c.kind, c.commit, rids[c.id])
            for c in (latest[cid] for cid in rids)
        ],
    )
    fresh = [(cid, c) for cid, c in latest.items() if cid not in rids]
    first = _next_rowid(conn, "chunks", "rid")
    rows, fts_rows = [], []
    for rid, (cid, chunk) in enumerate(fresh, start=first):
        values = chunk_fts_values(chunk)
        rows.append((rid, cid, *_chunk_fields(chunk), pack(values)))
        fts_rows.append((rid, *values))
        rids[cid] = rid
    conn.executemany(_CHUNK_INSERT, rows)
    conn.executemany(_CHUNK_FTS_INSERT, fts_rows)
    return rids, dropped


def _chunk_fields(c: Chunk) -> tuple[object, ...]:
    """The chunk's columns from `repo` to `commit_sha`, in table order."""
    return tuple(getattr(c, name) for name in _CHUNK_ATTRS)


def _put_files(conn: sqlite3.Connection, repo: str, docs: Sequence[FileDoc]) -> None:
    latest = {d.path: d for d in docs}
    existing = {
        path: (fid, fts)
        for fid, path, fts in conn.execute(
            f"SELECT fid, path, fts FROM files WHERE repo = ? AND path {_IN_JSON}",
            (repo, json.dumps(list(latest))),
        )
    }
    fid = _next_rowid(conn, "files", "fid")
    for doc in latest.values():
        values = file_fts_values(doc)
        packed = pack(values)
        ids = json.dumps(list(doc.chunk_ids))
        old = existing.get(doc.path)
        if old is None:
            conn.execute(
                "INSERT INTO files (fid, repo, path, blob, language, chunk_ids, fts)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (fid, repo, doc.path, doc.blob, doc.language, ids, packed),
            )
            conn.execute(_FILE_FTS_INSERT, (fid, *values))
            fid += 1
            continue
        old_fid, old_fts = old
        if old_fts != packed:  # unchanged text keeps its FTS row untouched
            conn.execute(_FILE_FTS_DELETE, (old_fid, *unpack(old_fts, len(FILE_FIELDS))))
            conn.execute(_FILE_FTS_INSERT, (old_fid, *values))
        conn.execute(
            "UPDATE files SET blob = ?, language = ?, chunk_ids = ?, fts = ? WHERE fid = ?",
            (doc.blob, doc.language, ids, packed, old_fid),
        )


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
