"""Chunks by rowid, kept in memory between searches (LocalIndex's read side).

A search returns a few hundred chunks, most of them returned by earlier
searches too, and building them from SQLite rows was most of a search's time.
The cache holds `Chunk`s for one generation of the chunk rows: every write
that adds, removes or changes chunk rows, metadata included, bumps the
`rows_generation` counter in the index file's meta table inside its own
transaction (`bump`), so a cached chunk is always the row as stored in the
snapshot asking for it, whichever process wrote it. The lexical generation is
part of the key too (an index written by an older codecite moves only that).
A reader in an older snapshot bypasses the cache; the first reader of a newer
generation empties it. It is bounded by the text it holds; the least recently
used chunks go first.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from bot.models import Chunk

MAX_BYTES = 32 << 20  # of chunk text: a large repository's most asked chunks, not all of it
OVERHEAD = 300  # bytes per cached chunk besides its text: the object, its fields, the entry

Loader = Callable[[Sequence[int]], dict[int, Chunk]]
Generation = tuple[int, int]  # (lexical_generation, rows_generation): both only grow


def ensure_counter(conn: sqlite3.Connection) -> None:
    """Add the counter to an index file that lacks it (inside a write transaction)."""
    conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('rows_generation', '0')")


def bump(conn: sqlite3.Connection) -> None:
    """Record, in the caller's write transaction, that chunk rows changed."""
    conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'rows_generation'")


def generation(conn: sqlite3.Connection) -> Generation:
    """The generation of the chunk rows in the snapshot `conn` reads."""
    found = dict(
        conn.execute(
            "SELECT key, value FROM meta WHERE key IN ('lexical_generation', 'rows_generation')"
        )
    )
    return int(found.get("lexical_generation", 0)), int(found.get("rows_generation", 0))


def _cost(chunk: Chunk) -> int:
    return len(chunk.text) + len(chunk.header) + OVERHEAD


class ChunkCache:
    """Thread-safe; loads (outside its lock) only the chunks it does not hold."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self._max = max_bytes
        self._lock = threading.Lock()
        self._chunks: OrderedDict[int, Chunk] = OrderedDict()
        self._bytes = 0
        self._generation: Generation = (-1, -1)

    def get(self, generation: Generation, rids: Sequence[int], load: Loader) -> dict[int, Chunk]:
        """The chunks of `rids` that exist at `generation`; `load` fetches the others."""
        found: dict[int, Chunk] = {}
        with self._lock:
            if generation > self._generation:
                self._reset(generation)
            current = generation == self._generation
            if current:
                held = self._chunks
                found = {rid: chunk for rid in rids if (chunk := held.get(rid)) is not None}
                if self._bytes > self._max // 2:  # recency matters once evictions draw near
                    for rid in found:
                        held.move_to_end(rid)
        missing = [rid for rid in rids if rid not in found]
        if not missing:
            return found
        loaded = load(missing)
        found.update(loaded)
        if current:
            self._keep(generation, loaded)
        return found

    def _keep(self, generation: Generation, loaded: dict[int, Chunk]) -> None:
        with self._lock:
            if generation != self._generation:
                return  # a newer generation arrived while these were read
            for rid, chunk in loaded.items():
                if rid not in self._chunks:
                    self._chunks[rid] = chunk
                    self._bytes += _cost(chunk)
            while self._bytes > self._max and self._chunks:
                _, old = self._chunks.popitem(last=False)
                self._bytes -= _cost(old)

    def _reset(self, generation: Generation) -> None:
        self._chunks.clear()
        self._bytes = 0
        self._generation = generation

    def clear(self) -> None:
        with self._lock:
            self._reset((-1, -1))


# Columns that rebuild a Chunk, in constructor order (alias `c` for chunks).
CHUNK_COLUMNS = (
    "c.repo, c.path, c.language, c.start_line, c.end_line, c.kind, c.symbol, c.header, c.text,"
    " c.commit_sha"
)


def chunk_of_row(row: Sequence[Any]) -> Chunk:
    repo, path, lang, start, end, kind, symbol, header, text, commit = row
    return Chunk(repo, path, lang, start, end, kind, symbol, header, text, commit)


def load_chunks(conn: sqlite3.Connection, rids: Sequence[int]) -> dict[int, Chunk]:
    """Chunks by rowid from the rows `conn` sees (what the cache does not hold)."""
    if not rids:
        return {}
    rows = conn.execute(
        f"SELECT c.rid, {CHUNK_COLUMNS} FROM chunks c"
        " WHERE c.rid IN (SELECT value FROM json_each(?))",
        (json.dumps(list(rids)),),
    )
    return {int(row[0]): chunk_of_row(row[1:]) for row in rows}
