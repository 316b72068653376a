"""Chunks kept in memory between searches are never stale, and memory stays bounded."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from bot.index.local.index import LocalIndex
from bot.index.local.rowcache import OVERHEAD, ChunkCache, generation
from bot.models import Chunk
from tests.support.index_contract import (
    COMMIT_2,
    change_set,
    make_chunk,
    pseudo_vector,
    sample_chunks,
)

DIM = 8


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "index.sqlite"


@pytest.fixture
def index(db_path: Path) -> Iterator[LocalIndex]:
    idx = LocalIndex(db_path)
    yield idx
    idx.close()


class Loads:
    """A loader that records what it was asked for."""

    def __init__(self, chunks: dict[int, Chunk]) -> None:
        self.chunks = chunks
        self.asked: list[list[int]] = []

    def __call__(self, rids: Sequence[int]) -> dict[int, Chunk]:
        self.asked.append(list(rids))
        return {rid: self.chunks[rid] for rid in rids if rid in self.chunks}


def chunk(n: int, size: int = 10) -> Chunk:
    return make_chunk("alpha", f"f{n}.py", "x" * size)


def test_second_request_is_served_from_memory() -> None:
    load = Loads({1: chunk(1), 2: chunk(2)})
    cache = ChunkCache()
    assert cache.get((0, 0), [1, 2, 3], load) == {1: chunk(1), 2: chunk(2)}
    assert cache.get((0, 0), [2, 1], load) == {2: chunk(2), 1: chunk(1)}
    assert load.asked == [[1, 2, 3]]


def test_a_newer_generation_empties_it_and_an_older_one_bypasses_it() -> None:
    old, new = Loads({1: chunk(1)}), Loads({1: chunk(9)})
    cache = ChunkCache()
    cache.get((0, 0), [1], old)
    assert cache.get((0, 1), [1], new) == {1: chunk(9)}
    assert cache.get((0, 0), [1], old) == {1: chunk(1)}  # an older snapshot reads its own rows
    assert cache.get((0, 1), [1], new) == {1: chunk(9)}
    assert new.asked == [[1]] and old.asked == [[1], [1]]


def test_least_recently_used_chunks_go_first_when_full() -> None:
    each = 100 + OVERHEAD
    load = Loads({n: chunk(n, 100) for n in range(10)})
    cache = ChunkCache(max_bytes=3 * each)
    cache.get((0, 0), [0, 1, 2], load)
    cache.get((0, 0), [0], load)  # 0 is now the most recent
    cache.get((0, 0), [3], load)  # evicts 1
    load.asked.clear()
    cache.get((0, 0), [0, 1, 2, 3], load)
    assert load.asked == [[1]]


def test_a_chunk_written_again_with_new_metadata_is_seen(index: LocalIndex) -> None:
    chunks = sample_chunks()
    index.apply(change_set("alpha", chunks, dim=DIM))
    assert index.lexical(["callback"], repos=None, k=1)[0].chunk == chunks[0]
    later = [replace(c, commit=COMMIT_2, kind="block") for c in chunks]
    index.apply(change_set("alpha", later, dim=DIM))
    assert index.lexical(["callback"], repos=None, k=1)[0].chunk == later[0]
    assert index.dense(pseudo_vector(later[0].id, DIM), repos=None, k=1)[0].chunk == later[0]


def test_reused_rowids_never_serve_the_old_chunk(index: LocalIndex) -> None:
    index.apply(change_set("alpha", [make_chunk("alpha", "a.py", "zebra = 1\n")], dim=DIM))
    assert index.lexical(["zebra"], repos=None, k=1)[0].chunk.path == "a.py"
    index.remove_repo("alpha")
    index.apply(change_set("beta", [make_chunk("beta", "b.py", "zebra = 2\n")], dim=DIM))
    hit = index.lexical(["zebra"], repos=None, k=1)[0]
    assert (hit.chunk.repo, hit.chunk.path) == ("beta", "b.py")


def test_writes_from_another_connection_are_seen(index: LocalIndex, db_path: Path) -> None:
    chunks = sample_chunks()
    index.apply(change_set("alpha", chunks, dim=DIM))
    index.lexical(["callback"], repos=None, k=1)
    other = LocalIndex(db_path)  # as another process would
    try:
        later = [replace(c, commit=COMMIT_2) for c in chunks]
        other.apply(change_set("alpha", later, dim=DIM))
    finally:
        other.close()
    assert index.lexical(["callback"], repos=None, k=1)[0].chunk == later[0]


def test_the_counter_moves_with_chunk_writes_only(index: LocalIndex, db_path: Path) -> None:
    def now() -> tuple[int, int]:
        conn = sqlite3.connect(db_path)
        try:
            return generation(conn)
        finally:
            conn.close()

    chunks = sample_chunks()
    start = now()
    index.apply(change_set("alpha", chunks, dim=DIM))
    written = now()
    assert written > start
    index.apply(change_set("alpha", (), dim=DIM, files=()))  # the state alone
    assert now() == written


def test_an_index_file_without_the_counter_gets_one(db_path: Path) -> None:
    LocalIndex(db_path).close()
    conn = sqlite3.connect(db_path)
    conn.execute("DELETE FROM meta WHERE key = 'rows_generation'")
    conn.commit()
    conn.close()
    idx = LocalIndex(db_path)
    try:
        idx.apply(change_set("alpha", sample_chunks(), dim=DIM))
        assert idx.lexical(["callback"], repos=None, k=1)
    finally:
        idx.close()
    conn = sqlite3.connect(db_path)
    assert generation(conn)[1] == 1
    conn.close()
