from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

import numpy as np
import pytest

from bot.llm.embedding_cache import EmbeddingCache, cache_key


def vec(seed: int, dims: int = 8) -> list[float]:
    rng = np.random.default_rng(seed)
    return [float(x) for x in rng.standard_normal(dims).astype(np.float32)]


def test_round_trip_is_exact_for_float32(tmp_path: Path) -> None:
    with EmbeddingCache(tmp_path / "c.sqlite") as cache:
        cache.put_many({"a": vec(1), "b": vec(2, 3)})
        got = cache.get_many(["a", "b", "missing"])
    assert got == {"a": vec(1), "b": vec(2, 3)}


def test_overwrite_and_len(tmp_path: Path) -> None:
    with EmbeddingCache(tmp_path / "c.sqlite") as cache:
        cache.put_many({"a": vec(1)})
        cache.put_many({"a": vec(9), "b": vec(2)})
        cache.put_many({})
        assert len(cache) == 2
        assert cache.get_many(["a"]) == {"a": vec(9)}


def test_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "dir" / "c.sqlite"  # parent directories are created
    with EmbeddingCache(path) as cache:
        cache.put_many({f"k{i}": vec(i) for i in range(50)})
    with EmbeddingCache(path) as cache:
        assert len(cache) == 50
        assert cache.get_many(["k7"]) == {"k7": vec(7)}


def test_many_keys_are_fetched_in_batches(tmp_path: Path) -> None:
    with EmbeddingCache(tmp_path / "c.sqlite") as cache:
        items = {f"k{i}": vec(i, 4) for i in range(1800)}
        cache.put_many(items)
        got = cache.get_many([*items, "nope"] * 2)  # duplicates asked for are fine
    assert got == items


def test_threads_share_one_cache(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            for i in range(40):
                key = f"t{t}-{i}"
                cache.put_many({key: vec(t * 1000 + i, 4)})
                assert cache.get_many([key]) == {key: vec(t * 1000 + i, 4)}
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    assert len(cache) == 240
    cache.close()


def test_garbage_file_is_replaced_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "c.sqlite"
    path.write_bytes(b"this is not a database at all" * 100)
    with caplog.at_level(logging.WARNING), EmbeddingCache(path) as cache:
        assert cache.get_many(["a"]) == {}
        cache.put_many({"a": vec(1)})
        assert cache.get_many(["a"]) == {"a": vec(1)}
    assert "The embedding cache was damaged and has been started afresh" in caplog.text
    assert len(list(tmp_path.glob("c.sqlite.damaged-*"))) == 1


def test_damage_found_later_is_recovered(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "c.sqlite"
    with EmbeddingCache(path) as cache:
        cache.put_many({f"k{i}": vec(i, 256) for i in range(400)})
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    raw = bytearray(path.read_bytes())
    raw[8192:] = b"\xff" * (len(raw) - 8192)  # keep the header, wreck the pages
    path.write_bytes(bytes(raw))
    with caplog.at_level(logging.WARNING), EmbeddingCache(path) as cache:
        found = cache.get_many([f"k{i}" for i in range(400)])
        assert found == {}  # nothing trustworthy is served
        cache.put_many({"fresh": vec(1)})
        assert cache.get_many(["fresh"]) == {"fresh": vec(1)}
    assert "The embedding cache was damaged and has been started afresh" in caplog.text
    assert len(list(tmp_path.glob("c.sqlite.damaged-*"))) == 1


def test_cache_key_separates_model_dimensions_and_text() -> None:
    base = cache_key("text-embedding-3-small", None, "def f(): pass")
    assert base == cache_key("text-embedding-3-small", None, "def f(): pass")
    assert len(base) == 64
    others = {
        cache_key("text-embedding-3-large", None, "def f(): pass"),
        cache_key("text-embedding-3-small", 256, "def f(): pass"),
        cache_key("text-embedding-3-small", None, "def g(): pass"),
    }
    assert base not in others and len(others) == 3
