"""LocalIndex: the shared Index contract plus what only an SQLite file can promise."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest

from bot.errors import StoreError
from bot.index.base import ChangeSet
from bot.index.local import schema as local_schema
from bot.index.local.index import LocalIndex, prefix_upper_bound
from bot.index.local.lexical import MAX_TERMS, query_hashes
from bot.index.local.recovery import REBUILDING
from bot.index.local.termcounts import term_hash
from bot.models import Chunk
from bot.text.tokens import query_terms
from tests.support.damage import settle
from tests.support.index_contract import (
    COMMIT_2,
    HOOKS_PY,
    IndexContract,
    change_set,
    file_docs,
    make_chunk,
    pseudo_vector,
    repo_state,
    sample_chunks,
    unit,
)
from tests.support.paths import ROOT

DIM = 8


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "index.sqlite"


@pytest.fixture
def index(db_path: Path) -> Iterator[LocalIndex]:
    idx = LocalIndex(db_path)
    yield idx
    idx.close()


class TestLocalContract(IndexContract):
    DIM = DIM


def many_chunks(repo: str, n: int, *, files: int = 10, word: str = "shared") -> list[Chunk]:
    return [
        make_chunk(
            repo,
            f"pkg/mod_{i % files}.py",
            f"def handler_{i}(event):\n    return {word}_state(event, {i})\n",
            start=1 + 10 * (i // files),
            symbol=f"handler_{i}",
        )
        for i in range(n)
    ]


def lexical_docs(idx: LocalIndex) -> tuple[int, int]:
    """Chunk and file documents in the BM25 engine, checked against the rows on disk."""
    idx.lexical(["probe"], repos=None, k=1)  # brings the engine up to date
    engine = idx._lexical._engine
    assert engine is not None
    chunks = sum(seg.size for seg in engine.chunks.values())
    files = sum(seg.size for seg in engine.files.values())
    conn = sqlite3.connect(idx.path)
    try:
        rows = conn.execute(
            "SELECT (SELECT count(*) FROM chunks WHERE length(terms) > 0),"
            " (SELECT count(*) FROM files WHERE length(terms) > 0)"
        ).fetchone()
    finally:
        conn.close()
    assert rows == (chunks, files)
    return chunks, files


def snapshot(idx: LocalIndex) -> tuple[object, ...]:
    """Everything observable about the index, to compare before and after."""
    stats = idx.stats()
    return (
        idx.repo_states(),
        idx.manifest("alpha"),
        idx.ids_by_prefix(""),
        [h.chunk for h in idx.lexical(["callback", "fire", "backoff"], repos=None, k=10)],
        [h.path for h in idx.files_lexical(["hook", "retry"], repos=None, k=10)],
        [h.chunk.id for h in idx.dense(pseudo_vector("q", DIM), repos=None, k=10)],
        (stats.repos, stats.files, stats.chunks, stats.vectors),
        lexical_docs(idx),
    )


# -- bookkeeping ---------------------------------------------------------------


def test_lexical_docs_follow_chunks_through_updates(index: LocalIndex) -> None:
    chunks = sample_chunks()
    change = change_set("alpha", chunks, dim=DIM)
    index.apply(change)
    index.apply(change)
    assert lexical_docs(index) == (3, 2)
    renamed = replace(chunks[0], commit=COMMIT_2)
    index.apply(change_set("alpha", [renamed], dim=DIM, files=file_docs(chunks)))
    assert lexical_docs(index) == (3, 2)
    assert index.chunks_of("alpha", HOOKS_PY)[0].commit == COMMIT_2
    index.apply(
        change_set("alpha", [], dim=DIM, deletes=[c.id for c in chunks], removed_paths=[HOOKS_PY])
    )
    assert lexical_docs(index) == (0, 1)
    index.remove_repo("alpha")
    assert lexical_docs(index) == (0, 0)


def test_upsert_without_vector_keeps_the_stored_one(index: LocalIndex) -> None:
    chunks = sample_chunks()
    index.apply(change_set("alpha", chunks, dim=DIM))
    again = change_set("alpha", chunks, dim=DIM)
    index.apply(replace(again, vectors={}))
    assert index.stats().vectors == 3
    query = pseudo_vector(chunks[2].id, DIM)
    assert index.dense(query, repos=None, k=1)[0].chunk == chunks[2]


def test_chunks_without_vectors_are_searchable_lexically(index: LocalIndex) -> None:
    chunks = sample_chunks()
    index.apply(replace(change_set("alpha", chunks, dim=DIM), vectors={}))
    assert index.stats().vectors == 0
    assert index.dense(pseudo_vector("q", DIM), repos=None, k=5) == []
    assert [h.chunk for h in index.lexical(["callback"], repos=None, k=5)] == [chunks[0]]


def test_id_in_deletes_and_upserts_ends_up_present(index: LocalIndex) -> None:
    chunks = sample_chunks()
    index.apply(change_set("alpha", chunks, dim=DIM))
    index.apply(change_set("alpha", chunks[:1], dim=DIM, deletes=[chunks[0].id]))
    assert chunks[0].id in index.ids_by_prefix("alpha#")
    assert lexical_docs(index)[0] == 3


def test_deletes_never_reach_another_repository(index: LocalIndex) -> None:
    beta = sample_chunks("beta")
    index.apply(change_set("beta", beta, dim=DIM))
    index.apply(change_set("alpha", [], dim=DIM, deletes=[beta[0].id], removed_paths=[HOOKS_PY]))
    assert len(index.ids_by_prefix("beta#")) == 3
    assert set(index.manifest("beta")) == {c.path for c in beta}


def test_naive_indexed_at_is_taken_as_utc(index: LocalIndex) -> None:
    naive = replace(repo_state("alpha"), indexed_at=datetime(2024, 1, 2, 3, 4, 5))
    index.apply(ChangeSet(repo="alpha", state=naive))
    stored = index.repo_states()[0].indexed_at
    assert stored.utcoffset() is not None
    assert stored.replace(tzinfo=None) == datetime(2024, 1, 2, 3, 4, 5)


def test_weights_change_the_ranking(db_path: Path) -> None:
    in_symbol = make_chunk("alpha", "a.py", "def ledger():\n    pass\n", symbol="ledger")
    in_body = make_chunk("alpha", "b.py", "def f():\n    ledger(ledger)\n", symbol="f")
    change = change_set("alpha", [in_symbol, in_body], dim=DIM)
    ranked = {}
    for name, weights in {"symbol": (9.0, 0.1), "body": (0.1, 9.0)}.items():
        with LocalIndex(
            db_path.with_name(f"{name}.sqlite"), symbol_weight=weights[0], body_weight=weights[1]
        ) as idx:
            idx.apply(change)
            ranked[name] = [h.chunk.id for h in idx.lexical(["ledger"], repos=None, k=2)]
    assert ranked["symbol"] == [in_symbol.id, in_body.id]
    assert ranked["body"] == [in_body.id, in_symbol.id]


def test_bad_arguments_are_programming_errors(db_path: Path, index: LocalIndex) -> None:
    with pytest.raises(ValueError, match="symbol_weight"):
        LocalIndex(db_path, symbol_weight=float("nan"))
    with pytest.raises(ValueError, match="unknown lexical fields"):
        index.lexical(["x"], repos=None, k=5, fields=["bodyy"])
    with pytest.raises(ValueError, match="finite"):
        index.dense([float("inf")] * DIM, repos=None, k=5)


def test_vector_cache_survives_writes_that_leave_vectors_alone(index: LocalIndex) -> None:
    chunks = sample_chunks()
    index.apply(change_set("alpha", chunks, dim=DIM))
    index.dense(pseudo_vector("q", DIM), repos=None, k=1)
    loaded = index._vectors._snapshot
    index.apply(ChangeSet(repo="alpha", state=repo_state("alpha", commit=COMMIT_2)))
    index.apply(change_set("alpha", chunks, dim=DIM))  # identical vectors: nothing changes
    index.dense(pseudo_vector("q", DIM), repos=None, k=1)
    assert index._vectors._snapshot is loaded
    index.apply(
        change_set("alpha", chunks[:1], dim=DIM, vectors={chunks[0].id: unit(*[1.0] * DIM)})
    )
    index.dense(pseudo_vector("q", DIM), repos=None, k=1)
    assert index._vectors._snapshot is not loaded


def engine_of(idx: LocalIndex) -> object:
    idx.lexical(["probe"], repos=None, k=1)
    return idx._lexical._engine


def test_engine_survives_writes_that_leave_lexical_rows_alone(index: LocalIndex) -> None:
    chunks = sample_chunks()
    index.apply(change_set("alpha", chunks, dim=DIM))
    built = engine_of(index)
    index.apply(ChangeSet(repo="alpha", state=repo_state("alpha", commit=COMMIT_2)))
    index.apply(change_set("alpha", chunks, dim=DIM))  # the same chunks and files again
    later = [replace(c, commit=COMMIT_2, kind="block") for c in chunks]
    index.apply(change_set("alpha", later, dim=DIM))  # only metadata changes
    assert engine_of(index) is built
    assert index.lexical(["callback"], repos=None, k=1)[0].chunk == later[0]
    index.apply(change_set("alpha", [make_chunk("alpha", "z.py", "zebra = 1\n")], dim=DIM))
    assert engine_of(index) is not built


def test_only_the_written_repository_is_rebuilt(index: LocalIndex) -> None:
    index.apply(change_set("alpha", sample_chunks(), dim=DIM))
    index.apply(change_set("beta", sample_chunks("beta"), dim=DIM))
    before = idx_segments(index)
    index.apply(change_set("beta", [make_chunk("beta", "z.py", "zebra = 1\n")], dim=DIM))
    after = idx_segments(index)
    assert after["alpha"] == before["alpha"]
    assert after["beta"][0] is not before["beta"][0]
    index.remove_repo("beta")
    assert set(idx_segments(index)) == {"alpha"}
    assert [h.chunk.repo for h in index.lexical(["callback"], repos=None, k=5)] == ["alpha"]


def idx_segments(idx: LocalIndex) -> dict[str, tuple[object, object]]:
    idx.lexical(["probe"], repos=None, k=1)
    engine = idx._lexical._engine
    assert engine is not None
    return {repo: (engine.chunks[repo], engine.files[repo]) for repo in engine.chunks}


def test_a_reused_rowid_never_returns_the_old_chunk(index: LocalIndex) -> None:
    chunks = sample_chunks()
    index.apply(change_set("alpha", chunks, dim=DIM))
    assert [h.chunk for h in index.lexical(["attempt"], repos=None, k=5)] == [chunks[2]]
    zebra = make_chunk("alpha", "z.py", "def zebra():\n    pass\n", symbol="zebra")
    index.apply(change_set("alpha", [zebra], dim=DIM, deletes=[chunks[2].id]))
    rid = sqlite3.connect(index.path).execute("SELECT max(rid) FROM chunks").fetchone()[0]
    assert rid == 3  # the deleted chunk's rowid went to the new one
    assert index.lexical(["attempt"], repos=None, k=5) == []
    assert [h.chunk for h in index.lexical(["zebra"], repos=None, k=5)] == [zebra]


def test_damaged_term_counts_are_a_store_error(index: LocalIndex) -> None:
    index.apply(change_set("alpha", sample_chunks(), dim=DIM))
    conn = sqlite3.connect(index.path, isolation_level=None)
    try:
        conn.execute("UPDATE chunks SET terms = x'0102' WHERE rid = 1")
        conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'lexical_generation'")
        conn.execute("UPDATE lexical_segments SET generation = generation + 1")
    finally:
        conn.close()
    with pytest.raises(StoreError) as caught:
        index.lexical(["callback"], repos=None, k=5)
    assert "damaged" in caught.value.user_message


def test_query_vector_of_another_size_finds_nothing(index: LocalIndex) -> None:
    index.apply(change_set("alpha", sample_chunks(), dim=DIM))
    assert index.dense(pseudo_vector("q", DIM * 2), repos=None, k=5) == []


# -- atomicity -----------------------------------------------------------------


def _update(chunks: list[Chunk], vectors_dim: int = DIM) -> ChangeSet:
    """A change set touching every table: delete, upsert, vectors, files, removal, state."""
    new = make_chunk("alpha", HOOKS_PY, "def fire_all():\n    pass\n", symbol="fire_all")
    return change_set(
        "alpha",
        [new],
        dim=DIM,
        vectors={new.id: pseudo_vector(new.id, vectors_dim)},
        deletes=[chunks[0].id, chunks[2].id],
        removed_paths=["net/retry_policy.py"],
        files=file_docs([new, chunks[1]]),
        commit=COMMIT_2,
    )


def test_vector_of_wrong_dimension_rolls_back_everything(index: LocalIndex) -> None:
    chunks = sample_chunks()
    index.apply(change_set("alpha", chunks, dim=DIM))
    before = snapshot(index)
    with pytest.raises(StoreError) as caught:
        index.apply(_update(chunks, vectors_dim=DIM + 1))
    assert "dimensions" in caught.value.user_message
    assert snapshot(index) == before
    index.apply(_update(chunks))  # the same update with the right vectors goes in
    assert snapshot(index) != before


def test_failure_at_the_last_step_rolls_back_everything(
    index: LocalIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks = sample_chunks()
    index.apply(change_set("alpha", chunks, dim=DIM))
    before = snapshot(index)

    def fail(*args: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(local_schema, "_put_state", fail)
    with pytest.raises(StoreError) as caught:
        index.apply(_update(chunks))
    assert "disk on fire" not in caught.value.user_message
    monkeypatch.undo()
    assert snapshot(index) == before


def test_invalid_change_sets_are_refused(index: LocalIndex) -> None:
    chunks = sample_chunks()
    index.apply(change_set("alpha", chunks, dim=DIM))
    before = snapshot(index)
    stray = change_set("alpha", sample_chunks("beta"), dim=DIM)
    wrong_state = ChangeSet(repo="alpha", state=repo_state("beta"))
    orphan_vector = replace(change_set("alpha", [], dim=DIM), vectors={"alpha#x#y": [1.0] * DIM})
    nan_vector = change_set("alpha", chunks, dim=DIM, vectors={chunks[0].id: [float("nan")] * DIM})
    for bad in (stray, wrong_state, orphan_vector, nan_vector):
        with pytest.raises(StoreError):
            index.apply(bad)
    assert snapshot(index) == before


def test_dimension_can_change_when_every_vector_is_replaced(index: LocalIndex) -> None:
    chunks = sample_chunks()
    index.apply(change_set("alpha", chunks, dim=DIM))
    with pytest.raises(StoreError):
        index.apply(change_set("alpha", chunks[:1], dim=4))
    index.apply(change_set("alpha", chunks, dim=4))
    assert index.dense(pseudo_vector(chunks[1].id, 4), repos=None, k=1)[0].chunk == chunks[1]
    assert index.dense(pseudo_vector("q", DIM), repos=None, k=1) == []


# -- concurrency ---------------------------------------------------------------


def test_reader_thread_sees_old_or_new_state_never_a_mix(index: LocalIndex) -> None:
    base = many_chunks("alpha", 200, files=20)
    extra = many_chunks("beta", 600, files=60)
    index.apply(change_set("alpha", base, dim=DIM))
    # Each call is one snapshot: all old (alpha) or all new (alpha + beta), never between.
    seen_stats: set[tuple[int, ...]] = set()
    seen_counts: set[int] = set()
    errors: list[BaseException] = []
    done = threading.Event()
    query = pseudo_vector("q", DIM)

    def read() -> None:
        try:
            while not done.is_set():
                stats = index.stats()
                lexical = len(index.lexical(query_terms("shared_state"), repos=None, k=2000))
                dense = len(index.dense(query, repos=None, k=2000))
                seen_stats.add((stats.repos, stats.files, stats.chunks, stats.vectors))
                seen_counts.update((lexical, dense))
        except BaseException as exc:
            errors.append(exc)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for _ in range(6):
            index.apply(change_set("beta", extra, dim=DIM))
            index.remove_repo("beta")
    finally:
        done.set()
        reader.join()
    assert not errors
    assert seen_stats
    assert seen_stats <= {(1, 20, 200, 200), (2, 80, 800, 800)}
    assert seen_counts <= {200, 800}


def test_many_readers_share_one_engine_build(index: LocalIndex) -> None:
    index.apply(change_set("alpha", many_chunks("alpha", 300, files=30), dim=DIM))
    start = threading.Barrier(4)
    seen: list[list[str]] = []
    engines: set[int] = set()

    def read() -> None:
        start.wait()
        hits = index.lexical(query_terms("shared_state handler"), repos=None, k=20)
        seen.append([h.chunk.id for h in hits])
        engines.add(id(index._lexical._engine))

    threads = [threading.Thread(target=read) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 4
    assert all(ids == seen[0] for ids in seen)
    assert len(seen[0]) == 20
    assert len(engines) == 1


def test_threads_share_one_index(index: LocalIndex) -> None:
    index.apply(change_set("alpha", many_chunks("alpha", 50), dim=DIM))
    results: list[int] = []
    lock = threading.Lock()

    def work(i: int) -> None:
        repo = f"r{i}"
        index.apply(change_set(repo, many_chunks(repo, 20, word="own"), dim=DIM))
        n = len(index.lexical(query_terms("shared_state"), repos=frozenset({"alpha"}), k=100))
        with lock:
            results.append(n)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [50] * 6
    assert index.stats().chunks == 50 + 6 * 20
    assert lexical_docs(index)[0] == 170


_CHILD = """
import json, sys
from pathlib import Path
from bot.index.local.index import LocalIndex
from tests.support.index_contract import change_set, make_chunk
with LocalIndex(Path(sys.argv[1])) as idx:
    before = [h.chunk.id for h in idx.lexical(["callback"], repos=None, k=5)]
    zebra = make_chunk("child", "c.py", "def zebra():\\n    pass\\n")
    idx.apply(change_set("child", [zebra], dim=int(sys.argv[2])))
    print(json.dumps({"before": before, "chunks": idx.stats().chunks}))
"""


def test_another_process_reads_and_writes_the_same_file(index: LocalIndex) -> None:
    chunks = sample_chunks()
    index.apply(change_set("alpha", chunks, dim=DIM))
    probe = pseudo_vector("child-probe", DIM)
    assert {h.chunk.repo for h in index.dense(probe, repos=None, k=10)} == {"alpha"}
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(index.path), str(DIM)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    report = json.loads(out.stdout)
    assert report == {"before": [chunks[0].id], "chunks": 4}
    assert [h.chunk.repo for h in index.lexical(["zebra"], repos=None, k=5)] == ["child"]
    assert {h.chunk.repo for h in index.dense(probe, repos=None, k=10)} == {"alpha", "child"}


def test_writer_waits_for_another_writer_then_reports_busy(db_path: Path) -> None:
    with LocalIndex(db_path, busy_timeout=0.05) as idx:
        idx.apply(change_set("alpha", sample_chunks(), dim=DIM))
        other = sqlite3.connect(db_path, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            with pytest.raises(StoreError) as caught:
                idx.apply(change_set("beta", sample_chunks("beta"), dim=DIM))
            assert "busy" in caught.value.user_message
            assert len(idx.lexical(["callback"], repos=None, k=5)) == 1  # reads still work
            other.execute("ROLLBACK")
        finally:
            other.close()
        idx.apply(change_set("beta", sample_chunks("beta"), dim=DIM))
        assert idx.stats().repos == 2


def test_readers_never_see_uncommitted_writes(index: LocalIndex) -> None:
    index.apply(change_set("alpha", sample_chunks(), dim=DIM))
    other = sqlite3.connect(index.path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        other.execute("DELETE FROM repos")
        other.execute("UPDATE chunks SET text = 'gone'")
        assert [s.name for s in index.repo_states()] == ["alpha"]
        assert len(index.chunks_of("alpha", HOOKS_PY)) == 2
        assert "gone" not in {c.text for c in index.chunks_of("alpha", HOOKS_PY)}
        other.execute("ROLLBACK")
    finally:
        other.close()


def test_instances_racing_to_create_the_schema(db_path: Path) -> None:
    opened: list[LocalIndex] = []
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def open_one() -> None:
        start.wait()
        try:
            opened.append(LocalIndex(db_path))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    opened[0].apply(change_set("alpha", sample_chunks(), dim=DIM))
    assert all(idx.stats().chunks == 3 for idx in opened)
    for idx in opened:
        idx.close()


# -- the file itself -----------------------------------------------------------


def test_persists_across_reopen(db_path: Path) -> None:
    chunks = sample_chunks()
    with LocalIndex(db_path) as first:
        first.apply(change_set("alpha", chunks, dim=DIM))
        before = snapshot(first)
    with LocalIndex(db_path) as second:
        assert snapshot(second) == before
        assert second.stats().bytes > 0


def test_a_garbage_file_is_set_aside_and_a_new_one_awaits_its_rebuild(db_path: Path) -> None:
    with LocalIndex(db_path) as idx:
        idx.apply(change_set("alpha", many_chunks("alpha", 40), dim=DIM))
    db_path.write_bytes(b"this is not a database at all\x00\xff" * 200)  # header and all
    damaged: list[bool] = []
    with LocalIndex(db_path, on_damage=lambda: damaged.append(True)) as idx:
        assert damaged == [True]
        assert idx.repo_states() == []  # a new file
        # What it held, from the list of sources written beside it (the file says nothing).
        rebuilds = [(r.name, r.source, r.branch) for r in idx.rebuilds()]
        assert rebuilds == [("alpha", "https://example.com/org/alpha.git", "main")]
    [kept] = db_path.parent.glob(f"{db_path.name}.damaged-*")
    assert kept.read_bytes().startswith(b"this is not a database")


def test_damaged_pages_met_in_a_search_set_the_file_aside(db_path: Path) -> None:
    with LocalIndex(db_path) as idx:
        idx.apply(change_set("alpha", many_chunks("alpha", 400), dim=DIM))
    data = bytearray(db_path.read_bytes())
    for offset in range(4096, len(data), 4096):  # keep the header page, scramble the rest
        data[offset + 8 : offset + 200] = bytes(range(192))
    db_path.write_bytes(bytes(data))
    with LocalIndex(db_path) as idx:  # opening or a read meets the damage
        try:
            idx.lexical(["shared"], repos=None, k=5)
            idx.chunks_of("alpha", "pkg/mod_1.py")
            idx.stats()
        except StoreError as exc:
            assert exc.user_message == REBUILDING
        assert [r.name for r in idx.rebuilds()] == ["alpha"]
        assert idx.lexical(["shared"], repos=None, k=5) == []  # the new file answers
        assert idx.verify()
    assert list(db_path.parent.glob(f"{db_path.name}.damaged-*"))


def test_verify_finds_damage_a_search_did_not_meet(db_path: Path) -> None:
    with LocalIndex(db_path) as idx:
        idx.apply(change_set("alpha", many_chunks("alpha", 400), dim=DIM))
        assert idx.verify()
    settle(db_path)
    data = bytearray(db_path.read_bytes())
    last = len(data) - 4096  # one page of rows, far from what `repo_states` reads
    data[last + 8 : last + 200] = bytes(range(192))
    db_path.write_bytes(bytes(data))
    with LocalIndex(db_path) as idx:
        assert [s.name for s in idx.repo_states()] == ["alpha"]  # status would see nothing
        assert not idx.verify()
        assert idx.repo_states() == [] and [r.name for r in idx.rebuilds()] == ["alpha"]


def test_foreign_and_newer_files_are_refused(tmp_path: Path) -> None:
    foreign = tmp_path / "other.sqlite"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE notes (body TEXT)")
    conn.close()
    with pytest.raises(StoreError, match="another program"):
        LocalIndex(foreign)
    newer = tmp_path / "newer.sqlite"
    LocalIndex(newer).close()
    conn = sqlite3.connect(newer)
    conn.execute(f"PRAGMA user_version = {local_schema.SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(StoreError, match="newer codecite"):
        LocalIndex(newer)


def test_unopenable_path_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "adir").mkdir()
    with pytest.raises(StoreError):
        LocalIndex(tmp_path / "adir")


def test_closed_index_raises_store_error(db_path: Path) -> None:
    idx = LocalIndex(db_path)
    idx.close()
    idx.close()
    with pytest.raises(StoreError, match="closed"):
        idx.stats()
    with pytest.raises(StoreError, match="closed"):
        idx.apply(ChangeSet(repo="alpha", state=repo_state("alpha")))


def test_wal_mode_and_schema_version(index: LocalIndex) -> None:
    conn = sqlite3.connect(index.path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == local_schema.SCHEMA_VERSION
    finally:
        conn.close()


# -- queries -------------------------------------------------------------------

HOSTILE = [
    '"',
    '""',
    'say "hello',
    "NEAR(a b, 2)",
    "NEAR(",
    "*",
    "callback*",
    "-x",
    "- callback",
    "col:val",
    "body:callback",
    "{path symbol}: x",
    "a AND b OR NOT c",
    "AND",
    "OR",
    "NOT",
    "^callback",
    "(callback",
    "callback)",
    "a + b",
    "ünïcödé naïve café 日本語 🚀 ﷺ",
    "\x00callback\x00",
    "lone \ud800 surrogate callback",
    "'; DROP TABLE chunks; --",
    "x" * 300,
    "register_hook " * 4000,
]


@pytest.mark.parametrize("text", HOSTILE, ids=[f"q{i}" for i in range(len(HOSTILE))])
def test_hostile_query_text_never_raises(index: LocalIndex, text: str) -> None:
    index.apply(change_set("alpha", sample_chunks(), dim=DIM))
    for terms in ([text], query_terms(text), text.split()):
        assert isinstance(index.lexical(terms, repos=None, k=5), list)
        assert isinstance(index.lexical(terms, repos=frozenset({"alpha"}), k=5), list)
        assert isinstance(index.lexical(terms, repos=None, k=5, fields=["symbol", "path"]), list)
        assert isinstance(index.files_lexical(terms, repos=None, k=5), list)
    assert index.stats().chunks == 3


def test_no_fields_or_no_results_wanted_finds_nothing(index: LocalIndex) -> None:
    index.apply(change_set("alpha", sample_chunks(), dim=DIM))
    assert index.lexical(["callback"], repos=None, k=5, fields=()) == []
    assert index.lexical(["callback"], repos=None, k=5, fields=[]) == []
    assert index.lexical(["callback"], repos=None, k=0) == []
    assert index.files_lexical(["callback"], repos=None, k=0) == []
    assert index.dense(pseudo_vector("q", DIM), repos=None, k=0) == []


def test_operators_in_terms_are_searched_literally(index: LocalIndex) -> None:
    chunks = sample_chunks()
    index.apply(change_set("alpha", chunks, dim=DIM))
    assert [h.chunk for h in index.lexical(["callback*"], repos=None, k=5)] == [chunks[0]]
    assert index.lexical(["call*"], repos=None, k=5) == []  # not a prefix query
    assert [h.chunk for h in index.lexical(['"callback'], repos=None, k=5)] == [chunks[0]]
    assert index.lexical(["NOT"], repos=None, k=5) == []


def test_forty_thousand_character_question(index: LocalIndex) -> None:
    chunks = sample_chunks()
    index.apply(change_set("alpha", chunks, dim=DIM))
    words = " ".join(f"word{i}" for i in range(6000))
    text = (words + " callback")[:40_000] + " callback"
    terms = query_terms(text)
    assert len(terms) > 1000
    assert index.lexical(terms, repos=None, k=5) == []  # past the term cap
    assert [h.chunk for h in index.lexical(["callback", *terms], repos=None, k=5)] == [chunks[0]]


def test_query_terms_become_token_hashes() -> None:
    hashes = query_hashes(["a", 'b"c', "", "!!", "A", "x" * 300])
    assert hashes.tolist() == [term_hash("a"), term_hash("b"), term_hash("c")]
    assert query_hashes(["  ", "-"]).size == 0
    many = query_hashes([f"t{i}" for i in range(MAX_TERMS + 5)])
    assert many.tolist() == [term_hash(f"t{i}") for i in range(MAX_TERMS)]


def test_prefix_upper_bound() -> None:
    assert prefix_upper_bound("abc") == "abd"
    assert prefix_upper_bound("a#") == "a$"
    assert prefix_upper_bound("") is None
    assert prefix_upper_bound("\U0010ffff") is None
    assert prefix_upper_bound("a\U0010ffff") == "b"
    assert prefix_upper_bound("\ud7ff") == "\ue000"


def test_ids_by_prefix_with_unicode(index: LocalIndex) -> None:
    odd = make_chunk("ünï", "päth/日本.py", "def f():\n    pass\n")
    index.apply(change_set("ünï", [odd], dim=DIM))
    assert index.ids_by_prefix("ünï#päth/") == [odd.id]
    assert index.ids_by_prefix("ünï#päth/日") == [odd.id]
    assert index.ids_by_prefix("ünï#päth/日本.py#") == [odd.id]
    assert index.ids_by_prefix("ünï#q") == []
    assert index.ids_by_prefix("") == [odd.id]
