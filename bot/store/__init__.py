"""The storage seam: the records codecite keeps besides its search index.

`open_store(home)` hands out every part (`stores.runs`, `stores.feedback`,
`stores.claims`, `stores.locks`, `stores.symbols`, `stores.embedding_cache`,
`stores.pinecone_state`, `stores.jobs`, `stores.command_hashes(name)`); `bot.store.base` holds
the contract each part meets, `bot.store.records` the values they keep. With a
`database_url` the shared parts live in PostgreSQL (`bot.store.postgres`); without
one, in SQLite files of the data directory (`bot.store.local`), and psycopg is
never imported.
"""

from __future__ import annotations

from pathlib import Path

from bot.store.base import StoreSet

__all__ = ["StoreSet", "migrate_database", "open_store"]


def open_store(
    home: Path,
    *,
    symbols_path: Path | None = None,
    database_url: str | None = None,
    embedding_cache_max: int | None = None,
) -> StoreSet:
    """The stores of the data directory `home`, or of the database `database_url` (then
    every part is in PostgreSQL and `home` and `symbols_path` are not used).

    `symbols_path`: where the symbol table lives when not `home/symbols.sqlite` (beside a
    local index file, see `bot.wiring.symbols_path`). `embedding_cache_max`: the embedding
    cache's cap in vectors (None: `bot.store.embeddings.DEFAULT_MAX_ENTRIES`).
    """
    if database_url:
        from bot.store.embeddings import DEFAULT_MAX_ENTRIES
        from bot.store.postgres.stores import PostgresStores

        return PostgresStores(
            database_url, embedding_cache_max=embedding_cache_max or DEFAULT_MAX_ENTRIES
        )
    from bot.store.local import LocalStores

    return LocalStores(home, symbols_path=symbols_path, embedding_cache_max=embedding_cache_max)


def migrate_database(database_url: str) -> tuple[list[int], int]:
    """Bring the database's schema to the latest version (`codecite migrate`): the versions
    applied now (none when already current) and the version it is at. StoreError when the
    database cannot be reached (a sentence naming the host, never the password)."""
    from bot.store.postgres.connection import Database
    from bot.store.postgres.migrations import current_version, migrate

    database = Database(database_url)
    try:
        applied = migrate(database)
        return applied, current_version(database)
    finally:
        database.close()
