"""The storage seam: the records codecite keeps besides its search index.

`open_store(home)` hands out every part (`stores.runs`, `stores.feedback`,
`stores.claims`, `stores.locks`, `stores.symbols`, `stores.embedding_cache`,
`stores.pinecone_state`, `stores.command_hashes(name)`); `bot.store.base` holds
the contract each part meets, `bot.store.records` the values they keep.
"""

from __future__ import annotations

from pathlib import Path

from bot.store.base import StoreSet

__all__ = ["StoreSet", "open_store"]


def open_store(home: Path, *, symbols_path: Path | None = None) -> StoreSet:
    """The stores of the data directory `home` (SQLite files and lock files in it).

    `symbols_path`: where the symbol table lives when not `home/symbols.sqlite` (beside a
    local index file, see `bot.wiring.symbols_path`).
    """
    from bot.store.local import LocalStores

    return LocalStores(home, symbols_path=symbols_path)
