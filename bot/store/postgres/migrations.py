"""Versioned schema migrations for the PostgreSQL store.

Each migration is a numbered list of statements, applied in its own transaction
with its number recorded in `schema_version`, so a migration is applied once and
a failure leaves the schema at the last complete version. Migrations run under a
session advisory lock, so two processes migrating at once (two replicas starting,
or `codecite migrate` beside a running bot) apply each one exactly once; the
second waits, then finds nothing left to do. Append new migrations; never edit
one that has shipped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.store.postgres.schema import MIGRATIONS

if TYPE_CHECKING:
    import psycopg

    from bot.store.postgres.connection import Database

# The advisory lock migrations hold: per database, so keyed by the schema migrated.
MIGRATION_LOCK = "hashtextextended('codecite-migrate:' || coalesce(current_schema(), ''), 0)"
LATEST = max(MIGRATIONS)

_VERSIONS = """
CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
)
"""


def migrate(database: Database) -> list[int]:
    """Bring the schema to the latest version; the versions applied now (none: already up
    to date). Safe to run from several processes at once."""
    conn = database.connect()
    try:
        with database.translated():
            return _migrate(conn)
    finally:
        conn.close()


def current_version(database: Database) -> int:
    """The schema's version (0: never migrated)."""

    def read(conn: psycopg.Connection[tuple[object, ...]]) -> int:
        exists = conn.execute("SELECT to_regclass('schema_version') IS NOT NULL").fetchone()
        if not exists or not exists[0]:
            return 0
        row = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version").fetchone()
        return int(str(row[0])) if row else 0

    return database.run(read)


def _migrate(conn: psycopg.Connection[tuple[object, ...]]) -> list[int]:
    conn.execute(f"SELECT pg_advisory_lock({MIGRATION_LOCK})")
    try:
        conn.execute(_VERSIONS)
        done = {int(str(r[0])) for r in conn.execute("SELECT version FROM schema_version")}
        applied = []
        for version in sorted(MIGRATIONS):
            if version in done:
                continue
            name, statements = MIGRATIONS[version]
            with conn.transaction():
                for statement in statements:
                    conn.execute(statement.encode())
                conn.execute(
                    "INSERT INTO schema_version (version, name) VALUES (%s, %s)", (version, name)
                )
            applied.append(version)
        return applied
    finally:
        conn.execute(f"SELECT pg_advisory_unlock({MIGRATION_LOCK})")
