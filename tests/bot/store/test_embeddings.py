"""The embedding cache's size cap, for every implementation: a write that takes the cache
over `max_entries` evicts the least recently used vectors (written or found)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.store import StoreSet
from bot.store import embeddings as local_cache
from tests.support.stores import open_kind

CAP = 3


@pytest.fixture
def capped(kind: str, home: Path) -> Iterator[StoreSet]:
    opened = open_kind(kind, home, embedding_cache_max=CAP)
    yield opened
    opened.close()


def vec(n: int) -> list[float]:
    return [float(n), n / 2.0]


def test_the_oldest_written_go_first_beyond_the_cap(capped: StoreSet) -> None:
    cache = capped.embedding_cache
    for key in "abc":
        cache.put_many({key: vec(ord(key))})
    cache.put_many({"d": vec(4)})
    assert len(cache) == CAP
    assert sorted(cache.get_many("abcd")) == ["b", "c", "d"]
    cache.put_many({"b": vec(5)})  # an overwrite is no new entry: nothing evicted
    assert sorted(cache.get_many("abcd")) == ["b", "c", "d"]
    assert cache.get_many(["b"]) == {"b": vec(5)}


def test_a_vector_found_is_kept_over_one_never_read(
    capped: StoreSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local_cache, "TOUCH_AFTER", 0.0)  # record every use
    cache = capped.embedding_cache
    for key in "abc":
        cache.put_many({key: vec(ord(key))})
    assert cache.get_many(["a"]) == {"a": vec(ord("a"))}  # a is used now: b is the oldest
    cache.put_many({"d": vec(4)})
    assert sorted(cache.get_many("abcd")) == ["a", "c", "d"]


def test_uses_within_touch_after_are_not_recorded(capped: StoreSet) -> None:
    """Reads rarely write: a vector found again within TOUCH_AFTER keeps its old use."""
    cache = capped.embedding_cache
    for key in "abc":
        cache.put_many({key: vec(ord(key))})
    cache.get_many(["a"])
    cache.put_many({"d": vec(4)})
    assert sorted(cache.get_many("abcd")) == ["b", "c", "d"]


def test_a_batch_larger_than_the_cap_keeps_the_cap(capped: StoreSet) -> None:
    cache = capped.embedding_cache
    cache.put_many({f"k{n}": vec(n) for n in range(10)})
    assert len(cache) == CAP
    assert len(cache.get_many(f"k{n}" for n in range(10))) == CAP


def test_the_cap_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        local_cache.EmbeddingCache(tmp_path / "e.sqlite", max_entries=0)


def test_a_cache_written_before_the_cap_is_read_and_trimmed(tmp_path: Path) -> None:
    """A file of the old schema (no `used` column) keeps its vectors; they are the first out."""
    path = tmp_path / "embeddings.sqlite"
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE vectors (key TEXT PRIMARY KEY, dim INTEGER NOT NULL, vec BLOB NOT NULL) WITHOUT ROWID"
    )
    db.executemany(
        "INSERT INTO vectors VALUES (?, 2, ?)",
        [(k, local_cache.to_blob(vec(n))) for n, k in enumerate("xy")],
    )
    db.commit()
    db.close()
    with local_cache.EmbeddingCache(path, max_entries=2) as cache:
        cache.put_many({"new": vec(9)})  # the old rows were never used since: x goes
        assert cache.get_many(["x", "y", "new"]) == {"y": vec(1), "new": vec(9)}
