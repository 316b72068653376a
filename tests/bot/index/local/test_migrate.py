"""Opening an index file written by an older codecite (format 1: FTS5 tables)."""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Sequence
from pathlib import Path

import pytest

from bot.errors import StoreError
from bot.index.base import ChangeSet
from bot.index.local import schema as local_schema
from bot.index.local.index import LocalIndex
from bot.index.local.vectors import encode
from bot.text.tokens import code_tokens, join, path_tokens
from tests.support.index_contract import (
    HOOKS_PY,
    change_set,
    make_chunk,
    pseudo_vector,
    sample_chunks,
)

DIM = 8

# The format-1 schema exactly as codecite created it.
FORMAT_1 = """
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
    path, symbol, header, body, content='', tokenize="unicode61 tokenchars '_'"
);
CREATE VIRTUAL TABLE files_fts USING fts5(
    path, body, content='', tokenize="unicode61 tokenchars '_'"
);
INSERT INTO meta (key, value) VALUES ('vector_generation', '3');
"""


def _pack(values: Sequence[str]) -> bytes:
    return zlib.compress("\x1f".join(values).encode("utf-8"), 1)


def write_format_1(path: Path, changes: Sequence[ChangeSet]) -> None:
    """A format-1 file holding `changes` (first ingests), as format 1 wrote them."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.executescript(FORMAT_1)
        conn.execute(f"PRAGMA application_id = {local_schema.APPLICATION_ID}")
        conn.execute("PRAGMA user_version = 1")
        rid = fid = 0
        for change in changes:
            for chunk in change.upserts:
                rid += 1
                values = (
                    join(path_tokens(chunk.path)),
                    join(code_tokens(chunk.symbol)),
                    join(code_tokens(chunk.header)),
                    join(code_tokens(chunk.text)),
                )
                conn.execute(
                    "INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (rid, chunk.id, chunk.repo, chunk.path, chunk.language, chunk.start_line,
                     chunk.end_line, chunk.kind, chunk.symbol, chunk.header, chunk.text,
                     chunk.commit, _pack(values)),
                )  # fmt: skip
                conn.execute("INSERT INTO chunks_fts (rowid, path, symbol, header, body)"
                             " VALUES (?, ?, ?, ?, ?)", (rid, *values))  # fmt: skip
                vector = change.vectors[chunk.id]
                conn.execute("INSERT INTO vectors VALUES (?, ?, ?)", (rid, DIM, encode(vector)))
            for doc in change.files:
                fid += 1
                values = (join(path_tokens(doc.path)), join(code_tokens(doc.text)))
                conn.execute(
                    "INSERT INTO files VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (fid, change.repo, doc.path, doc.blob, doc.language,
                     json.dumps(list(doc.chunk_ids)), _pack(values)),
                )  # fmt: skip
                conn.execute(
                    "INSERT INTO files_fts (rowid, path, body) VALUES (?, ?, ?)", (fid, *values)
                )
            s = change.state
            conn.execute(
                "INSERT INTO repos VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (s.name, s.source, s.branch, s.commit, s.indexed_at.isoformat(), s.web_url,
                 s.files, s.chunks),
            )  # fmt: skip
    finally:
        conn.close()


def changes() -> list[ChangeSet]:
    extra = make_chunk(
        "beta", "billing/charge.py", "def charge(invoice):\n    return invoice.total\n",
        symbol="charge",
    )  # fmt: skip
    return [
        change_set("alpha", sample_chunks(), dim=DIM),
        change_set("beta", [*sample_chunks("beta"), extra], dim=DIM),
    ]


def observe(idx: LocalIndex) -> tuple[object, ...]:
    queries = (["callback", "hook"], ["invoice", "retry", "registry"], ["backoff", "attempt"])
    return (
        idx.repo_states(),
        idx.manifest("alpha"),
        idx.manifest("beta"),
        idx.ids_by_prefix(""),
        [[(h.chunk, h.score) for h in idx.lexical(q, repos=None, k=10)] for q in queries],
        [idx.lexical(q, repos=None, k=10, fields=["symbol", "path"]) for q in queries],
        [idx.files_lexical(q, repos=frozenset({"beta"}), k=10) for q in queries],
        [h.chunk.id for h in idx.dense(pseudo_vector("q", DIM), repos=None, k=10)],
        (idx.stats().repos, idx.stats().files, idx.stats().chunks, idx.stats().vectors),
    )


def test_a_format_1_file_is_upgraded_in_place(tmp_path: Path) -> None:
    old = tmp_path / "old.sqlite"
    write_format_1(old, changes())
    with LocalIndex(tmp_path / "fresh.sqlite") as fresh:
        for change in changes():
            fresh.apply(change)
        expected = observe(fresh)
    with LocalIndex(old) as upgraded:
        assert observe(upgraded) == expected
        upgraded.apply(change_set("alpha", [], dim=DIM, deletes=[sample_chunks()[0].id]))
        assert [h.chunk.repo for h in upgraded.lexical(["callback"], repos=None, k=5)] == ["beta"]
    conn = sqlite3.connect(old)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == local_schema.SCHEMA_VERSION
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_schema")}
        assert not {name for name in tables if "fts" in name}
        columns = {row[1] for row in conn.execute("PRAGMA table_info(chunks)")}
        assert "fts" not in columns
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    with LocalIndex(old) as again:  # a second open finds the current format, changes nothing
        assert again.stats().chunks == 6


def test_a_failed_upgrade_leaves_the_old_file_untouched(tmp_path: Path) -> None:
    old = tmp_path / "old.sqlite"
    write_format_1(old, changes())
    conn = sqlite3.connect(old, isolation_level=None)
    conn.execute("UPDATE files SET chunk_ids = 'not json' WHERE path = ?", (HOOKS_PY,))
    conn.close()
    before = old.read_bytes()
    with pytest.raises(StoreError) as caught:
        LocalIndex(old)
    assert "upgraded" in caught.value.user_message
    conn = sqlite3.connect(old)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
        assert conn.execute("SELECT count(*) FROM chunks_fts_docsize").fetchone()[0] == 7
        assert conn.execute("SELECT count(*) FROM chunks WHERE fts IS NOT NULL").fetchone()[0] == 7
    finally:
        conn.close()
    assert len(old.read_bytes()) == len(before)


def test_a_format_1_file_missing_a_table_is_refused(tmp_path: Path) -> None:
    old = tmp_path / "old.sqlite"
    write_format_1(old, changes())
    conn = sqlite3.connect(old)
    conn.execute("DROP TABLE files")
    conn.close()
    with pytest.raises(StoreError):
        LocalIndex(old)
    conn = sqlite3.connect(old)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    finally:
        conn.close()


def test_a_format_2_file_is_recounted_with_the_current_tokens(tmp_path: Path) -> None:
    """Format 2 was counted before options were tokens: its counts are made again."""
    option = make_chunk(
        "alpha", "cli.py", '_debug = click.Option(["--debug/--no-debug"], help="Set debug.")\n'
    )
    path = tmp_path / "index.sqlite"
    with LocalIndex(path) as idx:
        idx.apply(change_set("alpha", [*sample_chunks(), option], dim=DIM))
        expected = observe(idx)
        assert [h.chunk.id for h in idx.lexical(["__debug"], repos=None, k=5)] == [option.id]
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("UPDATE chunks SET terms = x''")  # counts of another tokenizer (here: none)
    conn.execute("UPDATE files SET terms = x''")
    conn.execute("PRAGMA user_version = 2")
    conn.close()
    with LocalIndex(path) as upgraded:
        assert observe(upgraded) == expected
        assert [h.chunk.id for h in upgraded.lexical(["__debug"], repos=None, k=5)] == [option.id]
        assert [f.path for f in upgraded.files_lexical(["__debug"], repos=None, k=5)] == ["cli.py"]
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == local_schema.SCHEMA_VERSION
    finally:
        conn.close()
