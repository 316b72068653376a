"""A large write tokenises in worker processes and stores exactly what one process would."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from bot.index.local import schema as local_schema
from bot.index.local.index import LocalIndex
from bot.runtime import parallel
from tests.support.index_contract import change_set, make_chunk

DIM = 4


def rows(path: Path) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        chunks = conn.execute("SELECT rid, id, terms FROM chunks ORDER BY rid").fetchall()
        files = conn.execute("SELECT fid, path, terms FROM files ORDER BY fid").fetchall()
    finally:
        conn.close()
    return chunks + files


def write(path: Path) -> list[tuple[object, ...]]:
    chunks = [
        make_chunk("alpha", f"pkg/m{i % 13}.py", f"def f{i}(x):\n    return g_{i % 7}(x) + {i}\n")
        for i in range(300)
    ]
    idx = LocalIndex(path)
    try:
        idx.apply(change_set("alpha", chunks, dim=DIM))
        assert idx.lexical(["g_3"], repos=None, k=1)
    finally:
        idx.close()
    return rows(path)


def test_workers_store_what_one_process_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alone = write(tmp_path / "one.sqlite")
    calls: list[int | None] = []
    original = parallel.ordered_map

    def with_a_worker(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(kwargs.get("workers"))
        kwargs.update(workers=1, parallel_above=0, batch_weight=500)
        return original(*args, **kwargs)

    monkeypatch.setattr(local_schema, "ordered_map", with_a_worker)
    assert write(tmp_path / "two.sqlite") == alone
    assert calls == [None]
