"""Segment files written after an ingest let go of its chunks: deferred per thread, never lost."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from bot.index.local.index import LocalIndex
from bot.ingest.pipeline import IngestOptions, Ingestor
from tests.support.index_contract import change_set, sample_chunks
from tests.support.shop import build_shop

DIM = 8


def seg_repos(db_path: Path) -> set[str]:
    folder = db_path.with_name(db_path.name + ".segments")
    return {p.name for p in folder.glob("*.seg") if not p.name.startswith(".")}


def test_inside_deferred_the_file_waits_for_the_end(tmp_path: Path) -> None:
    db_path = tmp_path / "index.sqlite"
    with LocalIndex(db_path) as idx:
        with idx.segments_deferred():
            idx.apply(change_set("alpha", sample_chunks(), dim=DIM))
            idx.apply(change_set("beta", sample_chunks("beta"), dim=DIM))
            assert seg_repos(db_path) == set()  # committed, file not yet written
            # the rows answer meanwhile (a reader builds what it needs)
            assert idx.lexical(["callback"], repos=None, k=5)
        assert len(seg_repos(db_path)) == 2
    with LocalIndex(db_path) as fresh:
        assert fresh.lexical(["callback"], repos=None, k=5)
        assert fresh._lexical.built == 0  # opened from the files written at the end


def test_a_failure_inside_still_writes_what_committed(tmp_path: Path) -> None:
    db_path = tmp_path / "index.sqlite"
    with LocalIndex(db_path) as idx:
        with pytest.raises(RuntimeError), idx.segments_deferred():
            idx.apply(change_set("alpha", sample_chunks(), dim=DIM))
            raise RuntimeError("the ingest failed after its commit")
        assert len(seg_repos(db_path)) == 1


def test_deferral_is_per_thread(tmp_path: Path) -> None:
    db_path = tmp_path / "index.sqlite"
    with LocalIndex(db_path) as idx, idx.segments_deferred():
        other = threading.Thread(
            target=idx.apply, args=(change_set("beta", sample_chunks("beta"), dim=DIM),)
        )
        other.start()
        other.join()
        assert len(seg_repos(db_path)) == 1  # the other thread's ingest wrote at once
        idx.apply(change_set("alpha", sample_chunks(), dim=DIM))
        assert len(seg_repos(db_path)) == 1


def test_an_ingest_leaves_its_segment_file(make_repo, tmp_path: Path) -> None:
    repo = make_repo("shop")
    build_shop(repo)
    db_path = tmp_path / "index.sqlite"
    with LocalIndex(db_path) as idx:
        Ingestor(idx, home=tmp_path).ingest(str(repo.path), IngestOptions(name="shop"))
        assert len(seg_repos(db_path)) == 1
    with LocalIndex(db_path) as fresh:
        assert fresh.lexical(["webhooks", "retry"], repos=None, k=3)
        assert fresh._lexical.built == 0


def test_an_ingest_writes_the_file_after_its_last_step(make_repo, tmp_path, monkeypatch) -> None:
    """The file is built once the ingest is over (its symbols written, its chunks garbage),
    not inside `apply`, where the build's peak would stack on the ingest's."""
    from bot.ingest.symbol_sync import SymbolSync

    repo = make_repo("shop")
    build_shop(repo)
    steps: list[str] = []
    real_apply, real_persist, real_write = LocalIndex.apply, LocalIndex._persist, SymbolSync.write
    monkeypatch.setattr(LocalIndex, "apply", lambda s, c: (steps.append("apply"), real_apply(s, c)))
    monkeypatch.setattr(
        LocalIndex, "_persist", lambda s, r: (steps.append("segment"), real_persist(s, r))
    )
    monkeypatch.setattr(
        SymbolSync, "write", lambda s, *a: (steps.append("symbols"), real_write(s, *a))[1]
    )
    with LocalIndex(tmp_path / "index.sqlite") as idx:
        Ingestor(idx, home=tmp_path).ingest(str(repo.path), IngestOptions(name="shop"))
    assert steps == ["apply", "symbols", "segment"]
