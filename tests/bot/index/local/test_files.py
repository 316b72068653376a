"""File rows summed while chunks stream in: the same rows as summing everything at the end."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest

from bot.index.base import ChangeSet
from bot.index.local import files as local_files
from bot.index.local.index import LocalIndex
from bot.index.local.termcounts import chunks_terms, file_terms
from bot.models import Chunk, FileDoc
from tests.support.index_contract import change_set, file_docs, make_chunk

DIM = 4


def file_rows(path: Path) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(
            "SELECT fid, repo, path, blob, language, chunk_ids, terms FROM files ORDER BY fid"
        ).fetchall()
    finally:
        conn.close()


def apply_all(path: Path, changes: Sequence[ChangeSet]) -> list[tuple[object, ...]]:
    idx = LocalIndex(path)
    try:
        for change in changes:
            idx.apply(change)
    finally:
        idx.close()
    return file_rows(path)


def module(path: str, n: int, word: str = "alpha") -> list[Chunk]:
    return [
        make_chunk("r", path, f"def {word}_{i}(x):\n    return x + {i}\n", start=1 + 3 * i)
        for i in range(n)
    ]


def expected_terms(chunks: Sequence[Chunk]) -> dict[str, bytes]:
    """Each file's counts, summed the plain way from its chunks in line order."""
    by_path: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_path.setdefault(chunk.path, []).append(chunk)
    return {
        path: file_terms(path, chunks_terms(sorted(group, key=lambda c: c.start_line)))
        for path, group in by_path.items()
    }


def test_files_summed_in_small_batches_match_one_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks = [c for i in range(9) for c in module(f"m{i}.py", 1 + i % 4)]
    change = change_set("r", chunks, dim=DIM)
    whole = apply_all(tmp_path / "a.sqlite", [change])
    monkeypatch.setattr(local_files, "FILES_PER_BATCH", 2)
    assert apply_all(tmp_path / "b.sqlite", [change]) == whole
    assert {row[2]: row[6] for row in whole} == expected_terms(chunks)


def test_a_changed_file_sums_its_kept_chunks_from_the_table(tmp_path: Path) -> None:
    before = module("a.py", 3) + module("b.py", 2, "beta")
    kept, gone = before[:2], before[2]
    added = make_chunk("r", "a.py", "def gamma(x):\n    return zebra(x)\n", start=7)
    after = [*kept, added, *before[3:]]
    first = change_set("r", before, dim=DIM)
    second = change_set(
        "r", [added], dim=DIM, deletes=[gone.id], files=file_docs(after), totals=(2, 5)
    )
    rows = apply_all(tmp_path / "x.sqlite", [first, second])
    assert {row[2]: row[6] for row in rows} == expected_terms(after)


def test_new_files_get_rowids_in_the_change_sets_order(tmp_path: Path) -> None:
    chunks = module("z.py", 2) + module("a.py", 2, "beta")
    docs = file_docs(chunks)
    docs.reverse()  # listed a.py first, though its chunks arrive last
    empty = FileDoc("e.py", "e" * 40, "python", "", ())
    change = change_set("r", chunks, dim=DIM, files=[*docs, empty])
    rows = apply_all(tmp_path / "x.sqlite", [change])
    assert [row[2] for row in rows] == ["a.py", "z.py", "e.py"]
    assert rows[2][6] == file_terms("e.py", [])


def test_an_unchanged_file_keeps_its_stored_counts(tmp_path: Path) -> None:
    chunks = module("a.py", 2)
    change = change_set("r", chunks, dim=DIM)
    path = tmp_path / "x.sqlite"
    apply_all(path, [change])
    conn = sqlite3.connect(path)
    conn.execute("UPDATE files SET terms = x'' WHERE path = 'a.py'")
    conn.commit()
    conn.close()
    assert apply_all(path, [change])[0][6] == b""  # not summed again
