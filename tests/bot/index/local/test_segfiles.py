"""Segment files: a fresh process opens them instead of building, and never trusts a bad one."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from bot.index.local.index import LocalIndex
from bot.index.local.segfiles import PathTable, SegmentFiles
from bot.models import Hit
from tests.support.index_contract import change_set, make_chunk, sample_chunks
from tests.support.paths import ROOT

DIM = 8
QUESTIONS = (["callback"], ["retry", "attempt"], ["hooks", "dispatch"], ["zebra"], ["handler"])


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "index.sqlite"


def seg_dir(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".segments")


def seg_files(db_path: Path) -> list[Path]:
    return sorted(p for p in seg_dir(db_path).glob("*.seg") if not p.name.startswith("."))


def filled(db_path: Path) -> None:
    with LocalIndex(db_path) as idx:
        idx.apply(change_set("alpha", sample_chunks(), dim=DIM))
        idx.apply(change_set("beta", sample_chunks("beta"), dim=DIM))
        zebra = make_chunk("beta", "z.py", "def zebra(handler):\n    pass\n", symbol="zebra")
        idx.apply(change_set("beta", [*sample_chunks("beta"), zebra], dim=DIM))


RETRIEVER_FIELDS = (("path", "symbol"), ("path",))  # the views kept on disk


def answers(
    idx: LocalIndex,
    repos: frozenset[str] | None = None,
    some_fields: tuple[tuple[str, ...], ...] = (*RETRIEVER_FIELDS, ("body",)),
) -> list[object]:
    """Every kind of lexical query, as comparable values."""
    out: list[object] = []
    for terms in QUESTIONS:
        hits: list[Hit] = idx.lexical(terms, repos=repos, k=10)
        out.append([(h.chunk.id, h.score) for h in hits])
        for fields in some_fields:
            hits = idx.lexical(terms, repos=repos, k=10, fields=fields)
            out.append([(h.chunk.id, h.score) for h in hits])
        out.append(idx.files_lexical(terms, repos=repos, k=10))
        out.append(idx.term_stats(terms, repos=repos))
    return out


def rebuilt_answers(db_path: Path, *args: object) -> list[object]:
    """The answers of an index built from the rows alone (no segment files)."""
    with LocalIndex(db_path) as idx:
        idx._lexical._files = None
        return answers(idx, *args)  # type: ignore[arg-type]


@pytest.fixture
def index(db_path: Path) -> Iterator[LocalIndex]:
    filled(db_path)
    idx = LocalIndex(db_path)
    yield idx
    idx.close()


def test_ingest_writes_one_file_per_repository(db_path: Path) -> None:
    filled(db_path)
    files = seg_files(db_path)
    assert len(files) == 2  # beta's first generation was replaced, not kept
    assert not list(seg_dir(db_path).glob(".writing-*"))


def test_a_fresh_index_opens_the_files_and_builds_nothing(index: LocalIndex, db_path: Path) -> None:
    got = answers(index)
    assert index._lexical.built == 0
    assert index._segments.opened == 2
    assert got == rebuilt_answers(db_path)
    assert any(got)


def test_a_fresh_process_opens_the_files_and_builds_nothing(index: LocalIndex) -> None:
    script = (
        "import sys; from bot.index.local.index import LocalIndex\n"
        "idx = LocalIndex(__import__('pathlib').Path(sys.argv[1]))\n"
        "hits = idx.lexical(['callback'], repos=None, k=3)\n"
        "print(idx._lexical.built, idx._segments.opened, len(hits))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(index.path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout.split()
    assert out[:2] == ["0", "2"]
    assert int(out[2]) > 0


def damage_truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-100])


def damage_header(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[20] ^= 0xFF
    path.write_bytes(bytes(data))


def damage_terms(path: Path) -> None:
    """Flip a byte inside the chunk segment's sorted terms (a checksummed array)."""
    data = bytearray(path.read_bytes())
    at = _array_offset(data, "chunks.terms")
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))


def damage_docs(path: Path) -> None:
    """Point every posting of the chunk segment past its documents (not checksummed)."""
    data = bytearray(path.read_bytes())
    head = _header(data)
    for name, _, shape, offset, nbytes, _ in head["arrays"]:
        if name == "chunks.docs":
            data[offset : offset + nbytes] = np.full(shape, 10**6, dtype=np.int32).tobytes()
    path.write_bytes(bytes(data))


def _header(data: bytearray) -> dict[str, object]:
    length = int.from_bytes(data[8:16], "little")
    parsed: dict[str, object] = json.loads(bytes(data[16 : 16 + length]))
    return parsed


def _array_offset(data: bytearray, wanted: str) -> int:
    arrays = _header(data)["arrays"]
    assert isinstance(arrays, list)
    return next(int(offset) for name, _, _, offset, _, _ in arrays if name == wanted)


def damage_delete(path: Path) -> None:
    path.unlink()


def damage_garbage(path: Path) -> None:
    path.write_bytes(b"not a segment file at all")


@pytest.mark.parametrize(
    "damage",
    [damage_truncate, damage_header, damage_terms, damage_docs, damage_delete, damage_garbage],
)
def test_a_bad_file_is_rebuilt_and_rewritten_with_the_same_answers(
    db_path: Path, damage: object
) -> None:
    filled(db_path)
    want = rebuilt_answers(db_path)
    assert callable(damage)
    for path in seg_files(db_path):
        damage(path)
    with LocalIndex(db_path) as idx:
        assert answers(idx) == want
        assert idx._lexical.built == 2
    with LocalIndex(db_path) as idx:  # the rebuilt files were written again
        assert answers(idx) == want
        assert idx._lexical.built == 0


def test_a_file_of_another_index_or_generation_is_stale(db_path: Path) -> None:
    filled(db_path)
    want = rebuilt_answers(db_path)
    conn = sqlite3.connect(db_path, isolation_level=None)
    conn.execute("UPDATE meta SET value = 'another-index' WHERE key = 'segments_uid'")
    conn.close()
    with LocalIndex(db_path) as idx:
        assert answers(idx) == want
        assert idx._lexical.built == 2
        assert idx._segments.opened == 0


def test_other_weights_do_not_use_the_files(db_path: Path) -> None:
    filled(db_path)
    with LocalIndex(db_path, symbol_weight=9.0) as idx:
        idx.lexical(["callback"], repos=None, k=3)
        assert idx._lexical.built == 2


def test_reingest_replaces_only_the_changed_repository(index: LocalIndex, db_path: Path) -> None:
    before = {p.name: p.stat().st_mtime_ns for p in seg_files(db_path)}
    index.apply(
        change_set("alpha", [*sample_chunks(), make_chunk("alpha", "n.py", "new = 1\n")], dim=DIM)
    )
    after = {p.name: p.stat().st_mtime_ns for p in seg_files(db_path)}
    kept = set(before) & set(after)
    assert len(kept) == 1 and before[next(iter(kept))] == after[next(iter(kept))]
    assert len(after) == 2
    assert index._lexical.built == 1  # alpha, at its ingest; beta is opened
    assert answers(index) == rebuilt_answers(db_path)
    assert index._lexical.built == 1


def test_a_write_that_leaves_lexical_rows_alone_writes_no_file(
    index: LocalIndex, db_path: Path
) -> None:
    before = {p.name: p.stat().st_mtime_ns for p in seg_files(db_path)}
    index.apply(change_set("alpha", sample_chunks(), dim=DIM))
    assert {p.name: p.stat().st_mtime_ns for p in seg_files(db_path)} == before


def test_remove_repo_removes_its_file(index: LocalIndex, db_path: Path) -> None:
    index.remove_repo("beta")
    assert len(seg_files(db_path)) == 1
    assert {h.chunk.repo for h in index.lexical(["callback"], repos=None, k=10)} == {"alpha"}


def test_a_scoped_search_reads_no_other_repository_postings(
    index: LocalIndex, db_path: Path
) -> None:
    scope = frozenset({"alpha"})
    want = rebuilt_answers(db_path, scope, RETRIEVER_FIELDS)
    index.lexical(["probe"], repos=None, k=1)  # opens the engine
    engine = index._lexical._engine
    assert engine is not None
    beta = engine.chunks["beta"]
    # Every array of beta replaced by one that fails if read: a scoped search's statistics
    # (documents, document frequencies) are its scope's alone, so nothing of beta is needed.
    poisoned = {
        name: _Unreadable()
        for name in ("ids", "terms", "indptr", "docs", "saturated", "counts", "norm")
    }
    for segment in (beta, *beta.views.values(), engine.files["beta"]):
        for name, value in poisoned.items():
            object.__setattr__(segment, name, value)
    assert answers(index, scope, RETRIEVER_FIELDS) == want


class _Unreadable:
    def __getitem__(self, key: object) -> object:
        raise AssertionError("another repository's postings were read")

    @property
    def size(self) -> int:
        raise AssertionError("another repository's postings were read")


def test_a_read_only_directory_still_answers(db_path: Path, tmp_path: Path) -> None:
    filled(db_path)
    want = rebuilt_answers(db_path)
    for path in seg_files(db_path):
        path.unlink()
    store = SegmentFiles(tmp_path / "a-file-not-a-dir", "x")
    (tmp_path / "a-file-not-a-dir").write_text("occupied")
    with LocalIndex(db_path) as idx:
        idx._segments = idx._lexical._files = store
        assert answers(idx) == want


def test_path_table_finds_every_path_and_no_other() -> None:
    paths = {7: "b/x.py", 3: "a/é.py", 12: "c.py"}
    table = PathTable.of(paths)
    assert {fid: table.get(fid) for fid in paths} == paths
    assert table.get(5) is None and table.get(100) is None and table.get(0) is None
    assert PathTable.of({}).get(1) is None


def test_a_rebuild_sweeps_files_nothing_needs(db_path: Path) -> None:
    filled(db_path)
    seg_files(db_path)[0].unlink()  # one repository must be rebuilt
    folder = seg_dir(db_path)
    stray = folder / "0123456789abcdef0123.7.seg"  # a repository this index does not hold
    stray.write_bytes(b"x")
    crashed = folder / ".writing-abc.seg"
    crashed.write_bytes(b"half")
    fresh = folder / ".writing-def.seg"  # another process may be writing it right now
    fresh.write_bytes(b"half")
    old = 0.0
    os.utime(crashed, (old, old))
    with LocalIndex(db_path) as idx:
        idx.lexical(["callback"], repos=None, k=1)
    assert not stray.exists() and not crashed.exists() and fresh.exists()
    assert len(seg_files(db_path)) == 2


def test_writing_a_generation_removes_the_others(tmp_path: Path) -> None:
    store = SegmentFiles(tmp_path, "uid")
    for stamp in (3, 9):
        store.path("alpha", stamp).write_bytes(b"old")
    store.path("beta", 1).write_bytes(b"other repository")
    assert store.remove("alpha", keep=9) == 1
    assert store.path("alpha", 9).exists() and store.path("beta", 1).exists()
