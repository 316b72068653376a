"""The symbol table's SQLite layout, and opening a file with it.

One row per indexed file (`files`) holds its packed references (see `packed`);
`defs` holds its definitions, indexed by name ignoring ASCII case (one index
serves exact lookups too: they filter what it finds). `ref_names` is an FTS5 index over each file's
referenced names, so "which files use `send`" is one index lookup; FTS5 folds
case, so it finds candidates and the packed names decide exact matches.
`aliases` holds the names each file binds without a definition (re-exports, aliases,
members made in a loop: `bot.symbols.model.Alias`), indexed by name the same way.
Triggers keep the full-text index, `defs` and `aliases` in step with `files`.
`generations` counts writes per repository, so cached rankings know when they
are stale, in this process or another. Each file also keeps how each site was
written (`forms`, one byte a site) and its imports, class bases and qualified
receivers (`links`, text; see `bot.symbols.links`). `commits` records, in the same
transaction as the rows, which indexed commit a repository's rows match: a
crash between the index's commit and this table's leaves them visibly apart.

The file is a cache of what the sources say: a file of an older version that an
upgrade below reaches is brought up to date in place, keeping its rows (they go
on answering until the next ingest re-reads the files, as `SYMBOLS_VERSION`
asks); any other version is dropped and refilled by the next ingest, and a file
that is not a database is set aside.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

SCHEMA_VERSION = "5"
NAME_CHARS = "_$?!@"  # beside letters and digits, what names are made of

# A file's rows go with it (`files_removed`); version 5 added `aliases` to what it removes.
_REMOVED = """CREATE TRIGGER IF NOT EXISTS files_removed AFTER DELETE ON files BEGIN
    INSERT INTO ref_names (ref_names, rowid, names) VALUES ('delete', old.fid, old.names);
    DELETE FROM defs WHERE fid = old.fid;
    DELETE FROM aliases WHERE fid = old.fid;
END;"""
_TABLES = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS files (
    fid INTEGER PRIMARY KEY, repo TEXT NOT NULL, path TEXT NOT NULL, blob TEXT NOT NULL,
    names TEXT NOT NULL, offsets BLOB NOT NULL, sites BLOB NOT NULL,
    forms BLOB NOT NULL DEFAULT x'', links TEXT NOT NULL DEFAULT '',
    UNIQUE (repo, path)
);
CREATE TABLE IF NOT EXISTS defs (
    fid INTEGER NOT NULL, seq INTEGER NOT NULL, name TEXT NOT NULL, symbol TEXT NOT NULL,
    kind TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
    PRIMARY KEY (fid, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS defs_by_name ON defs (name COLLATE NOCASE);
CREATE TABLE IF NOT EXISTS aliases (
    fid INTEGER NOT NULL, seq INTEGER NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL,
    target TEXT NOT NULL, module TEXT NOT NULL, owner TEXT NOT NULL,
    start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
    PRIMARY KEY (fid, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS aliases_by_name ON aliases (name COLLATE NOCASE);
CREATE VIRTUAL TABLE IF NOT EXISTS ref_names USING fts5 (
    names, content='files', content_rowid='fid', detail=none,
    tokenize="unicode61 remove_diacritics 0 tokenchars '{NAME_CHARS}'"
);
CREATE TRIGGER IF NOT EXISTS files_added AFTER INSERT ON files BEGIN
    INSERT INTO ref_names (rowid, names) VALUES (new.fid, new.names);
END;
{_REMOVED}
CREATE TABLE IF NOT EXISTS generations (
    repo TEXT PRIMARY KEY, generation INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS commits (
    repo TEXT PRIMARY KEY, commit_sha TEXT NOT NULL
) WITHOUT ROWID;
"""
_DROP = """
DROP TRIGGER IF EXISTS files_added;
DROP TRIGGER IF EXISTS files_removed;
DROP TABLE IF EXISTS ref_names;
DROP TABLE IF EXISTS defs;
DROP TABLE IF EXISTS aliases;
DROP TABLE IF EXISTS files;
DROP TABLE IF EXISTS generations;
DROP TABLE IF EXISTS commits;
DROP TABLE IF EXISTS meta;
"""


def connect(path: Path | str, *, uri: bool = False) -> sqlite3.Connection:
    db = sqlite3.connect(path, check_same_thread=False, timeout=10, uri=uri)
    try:
        db.execute("PRAGMA synchronous=NORMAL")  # a cache: a lost last write is redone
    except sqlite3.Error:
        db.close()
        raise
    return db


def open_file(path: Path) -> sqlite3.Connection:
    """A connection to the table in `path`, created or brought to this schema version.

    Raises sqlite3.DatabaseError (after closing) when the file is not a usable database.
    """
    db = connect(path)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        ensure_schema(db)
    except sqlite3.Error:
        db.close()
        raise
    return db


# version -> (the version it becomes, columns to add: table, column, declaration, then
# statements). Each step is one transaction and skips a column that is already there; its
# statements can be rerun. New tables come from `_TABLES`, which runs first.
_UPGRADES: dict[str, tuple[str, tuple[tuple[str, str, str], ...], tuple[str, ...]]] = {
    "3": (
        "4",
        (
            ("files", "forms", "BLOB NOT NULL DEFAULT x''"),
            ("files", "links", "TEXT NOT NULL DEFAULT ''"),
        ),
        (),
    ),
    # Rows written before keep answering; their aliases come with the next ingest, which
    # re-reads every file (`bot.ingest.symbol_sync.SYMBOLS_VERSION`).
    "4": ("5", (), ("DROP TRIGGER IF EXISTS files_removed", _REMOVED)),
}


def ensure_schema(db: sqlite3.Connection) -> None:
    with db:
        db.executescript(_TABLES)
        row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    version = None if row is None else str(row[0])
    while version is not None and version in _UPGRADES:
        version = _upgrade(db, version)
    if version == SCHEMA_VERSION:
        return
    if version is not None:  # another layout: everything is rebuilt from the sources
        db.executescript(_DROP)
        db.executescript(_TABLES)
    with db:
        db.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)", (SCHEMA_VERSION,)
        )


def _upgrade(db: sqlite3.Connection, version: str) -> str:
    """Apply the step from `version`; the version reached."""
    target, columns, statements = _UPGRADES[version]
    with db:
        for table, column, declaration in columns:
            have = {str(r[1]) for r in db.execute(f"PRAGMA table_info({table})")}
            if column not in have:
                db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
        for statement in statements:
            db.execute(statement)
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)", (target,))
    return target
