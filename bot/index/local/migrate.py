"""Upgrading an older LocalIndex file in place, inside the caller's write transaction.

Format 1 kept lexical data in two contentless FTS5 tables plus a compressed copy
of each row's tokens (`fts`). Format 2 keeps term counts per row (`terms`) for
the in-memory BM25 engine. Format 3 is format 2 with the tokens of this version
(`bot.text.tokens`: command-line options and irregular past forms became tokens of
their own), so its term counts are counted again. Everything a later format needs can
be recomputed from what format 1 stored (chunk text, symbol, header and path; a file's
chunk ids), so the upgrade is automatic and atomic: it commits with the caller's
transaction or not at all, and a failure leaves the older file untouched.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time

from bot.errors import StoreError
from bot.index.local.termcounts import chunk_terms, file_terms
from bot.models import Chunk

log = logging.getLogger(__name__)

_BATCH = 2000
_FAILED = "The index file could not be upgraded to this version; delete it and reindex."
_TO_2 = (
    "DROP TABLE IF EXISTS chunks_fts",
    "DROP TABLE IF EXISTS files_fts",
    "DROP INDEX IF EXISTS chunks_scope",
    "DROP INDEX IF EXISTS files_scope",
    "ALTER TABLE chunks DROP COLUMN fts",
    "ALTER TABLE files DROP COLUMN fts",
    "ALTER TABLE chunks ADD COLUMN terms BLOB NOT NULL DEFAULT x''",
    "ALTER TABLE files ADD COLUMN terms BLOB NOT NULL DEFAULT x''",
    "CREATE TABLE lexical_segments (repo TEXT PRIMARY KEY, generation INTEGER NOT NULL)"
    " WITHOUT ROWID",
    "INSERT INTO meta (key, value) VALUES ('lexical_generation', '1')",
    "INSERT INTO lexical_segments (repo, generation) SELECT repo, 1 FROM"
    " (SELECT repo FROM chunks UNION SELECT repo FROM files UNION SELECT name FROM repos)",
)


def migrate(conn: sqlite3.Connection, version: int) -> None:
    """Bring a file of format `version` to the current one (the caller records it)."""
    if version not in (1, 2):
        raise StoreError("The index format is outdated; delete the index file and reindex.")
    started = time.perf_counter()
    log.info("upgrading the index file from format %d; this happens once", version)
    if version == 1:
        for statement in _TO_2:
            conn.execute(statement)
    else:
        _touch_all(conn)  # every segment is rebuilt from the new counts
    try:
        chunks = _recount_chunks(conn)
        files = _recount_files(conn)
    except (ValueError, TypeError) as exc:  # rows format 1 should never have held
        raise StoreError(_FAILED, detail=f"{type(exc).__name__}: {exc}") from exc
    log.info(
        "index upgraded: %d chunks and %d files recounted in %.1f s",
        chunks,
        files,
        time.perf_counter() - started,
    )


def _touch_all(conn: sqlite3.Connection) -> None:
    """Mark every repository's lexical rows changed, as one write would (`lexical.touch`)."""
    conn.execute(
        "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'lexical_generation'"
    )
    conn.execute(
        "UPDATE lexical_segments SET generation ="
        " (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'lexical_generation')"
    )


def _recount_chunks(conn: sqlite3.Connection) -> int:
    done, last = 0, 0
    while True:
        rows = conn.execute(
            "SELECT rid, repo, path, language, start_line, end_line, kind, symbol, header, text,"
            " commit_sha FROM chunks WHERE rid > ? ORDER BY rid LIMIT ?",
            (last, _BATCH),
        ).fetchall()
        if not rows:
            return done
        conn.executemany(
            "UPDATE chunks SET terms = ? WHERE rid = ?",
            [(chunk_terms(Chunk(*row[1:])), row[0]) for row in rows],
        )
        done += len(rows)
        last = rows[-1][0]


def _recount_files(conn: sqlite3.Connection) -> int:
    done = 0
    repos = [r[0] for r in conn.execute("SELECT DISTINCT repo FROM files")]
    for repo in repos:
        blobs = dict(conn.execute("SELECT id, terms FROM chunks WHERE repo = ?", (repo,)))
        rows = conn.execute(
            "SELECT fid, path, chunk_ids FROM files WHERE repo = ?", (repo,)
        ).fetchall()
        updates = []
        for fid, path, ids in rows:
            members = (blobs[cid] for cid in json.loads(ids) if cid in blobs)
            updates.append((file_terms(path, members), fid))
        conn.executemany("UPDATE files SET terms = ? WHERE fid = ?", updates)
        done += len(rows)
    return done
