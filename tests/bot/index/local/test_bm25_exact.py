"""The engine's fast path gives bit-identical scores to the straightforward one, on a real
multi-repository index (this project's own sources, ingested by a real Core)."""

from __future__ import annotations

import random
import re
import shutil
from collections.abc import Iterator, Mapping, Sequence

import numpy as np
import pytest

from bot.index.local import bm25
from bot.index.local.index import LocalIndex
from bot.index.local.lexical import Engine, query_hashes
from tests.support.paths import ROOT
from tests.support.trees import index_files

# Repositories of real code of different sizes; "copy" is "engine" again, so every chunk of
# one has a twin of the same score in the other (ties across segments).
SOURCES = {
    "retrieval": "bot/retrieval",
    "engine": "bot/index/local",
    "text": "bot/text",
    "copy": "bot/index/local",
}
VIEWS = (None, (2.0, 3.0, 0.0, 0.0), (2.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))


def straightforward(
    segments: Mapping[str, bm25.Segment],
    scope: Sequence[str] | None,
    hashes: bm25.Hashes,
    k: int,
    fields: Sequence[float] | None,
) -> list[tuple[int, float]]:
    """The search as it was first written: every hit of every segment in scope, then the top
    k; the statistics (documents, document frequencies) are the scope's alone."""
    hashes = np.unique(hashes)
    if k <= 0 or hashes.size == 0:
        return []
    names = list(segments) if scope is None else [s for s in scope if s in segments]
    segments = {n: segments[n] for n in names}  # what is out of scope does not count
    if fields is not None:
        segments = {n: s.restricted(tuple(fields)) for n, s in segments.items()}
    located = {name: seg.locate(hashes) for name, seg in segments.items()}
    df = np.zeros(hashes.size, dtype=np.float64)
    for _, lengths in located.values():
        df += lengths
    n_docs = sum(seg.size for seg in segments.values())
    idf = np.maximum(np.log((n_docs - df + 0.5) / (df + 0.5)), bm25.MIN_IDF)
    scores, ids = [], []
    for name in names:
        seg = segments[name]
        starts, lengths = located[name]
        index = bm25._ranges(starts, lengths)
        weights = seg.saturated[index] * np.repeat(idf, lengths)
        total = np.bincount(seg.docs[index], weights=weights, minlength=seg.size)
        hit = np.flatnonzero(total)
        scores.append(total[hit])
        ids.append(seg.ids[hit])
    every, rids = np.concatenate(scores), np.concatenate(ids)
    order = np.lexsort((rids, -every))[:k]
    return list(zip(rids[order].tolist(), every[order].tolist(), strict=True))


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Engine, list[str]]]:
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CODECITE_HOME", str(home))
        for name, source in SOURCES.items():
            tree = tmp_path_factory.mktemp(name)
            shutil.copytree(ROOT / source, tree, dirs_exist_ok=True)
            files = {str(p.relative_to(tree)): p.read_text() for p in tree.rglob("*.py")}
            index_files(tree, files, name=name).close()
    idx = LocalIndex(home / "index.sqlite")
    with idx._read() as conn:
        found = idx._lexical.get(conn)
        texts = [row[0] for row in conn.execute("SELECT text FROM chunks ORDER BY rid")]
    yield found, texts
    idx.close()


def queries(texts: list[str], seed: int) -> Iterator[list[str]]:
    """Words of real chunks: a few, a sentence's worth, a pasted issue's worth (to the cap)."""
    rnd = random.Random(seed)
    for size in (1, 2, 3, 8, 20, 60, 128, 300):
        words = re.findall(r"\w+", rnd.choice(texts))
        words += re.findall(r"\w+", rnd.choice(texts))  # common words: long postings
        yield rnd.sample(words, min(size, len(words)))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("long", [bm25.LONG_POSTINGS, 16, 1])  # which lists are copied whole
def test_scores_are_bit_identical_to_the_straightforward_search(
    engine: tuple[Engine, list[str]], seed: int, long: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bm25, "LONG_POSTINGS", long)
    found, texts = engine
    assert len(found.chunks) == 4 and sum(s.size for s in found.chunks.values()) > 200
    compared = 0
    for words in queries(texts, seed):
        hashes = query_hashes(words)
        for scope in (None, ["engine"], ["text", "retrieval"]):
            for fields in VIEWS:
                for k in (1, 10, 60, 150, 10_000):
                    want = straightforward(found.chunks, scope, hashes, k, fields)
                    assert bm25.search(found.chunks, scope, hashes, k, fields) == want
                    compared += len(want)
            want = straightforward(found.files, scope, hashes, 100, None)
            assert bm25.search(found.files, scope, hashes, 100) == want
    assert compared > 1000  # the queries did find things


def test_each_hit_names_the_segment_it_came_from(engine: tuple[Engine, list[str]]) -> None:
    found, texts = engine
    for words in queries(texts, 7):
        for repo, rid, _ in bm25.ranked(found.chunks, None, query_hashes(words), 150):
            assert rid in set(found.chunks[repo].ids.tolist())
        for repo, fid, _ in bm25.ranked(found.files, None, query_hashes(words), 100):
            assert found.paths[repo].get(fid) is not None


def test_ties_at_the_kth_score_go_to_the_lower_rowid(engine: tuple[Engine, list[str]]) -> None:
    """Twin chunks in two repositories score alike: the floor keeps every tie."""
    found, _ = engine
    hashes = query_hashes(["segment", "postings"])
    full = straightforward(found.chunks, None, hashes, 10_000, None)
    assert len({score for _, score in full}) < len(full)  # ties, as the twins promise
    for k in range(1, 60):
        assert bm25.search(found.chunks, None, hashes, k) == full[:k]


def test_a_scoped_search_is_the_search_of_an_engine_holding_only_its_scope(
    engine: tuple[Engine, list[str]],
) -> None:
    """What else the data directory holds changes no score of a scoped search (issue 26)."""
    found, texts = engine
    compared = 0
    for words in queries(texts, 11):
        hashes = query_hashes(words)
        for scope in (["engine"], ["text", "retrieval"], ["copy", "engine"]):
            alone = {name: found.chunks[name] for name in scope}
            for fields in VIEWS:
                want = bm25.search(alone, None, hashes, 150, fields)
                assert bm25.search(found.chunks, scope, hashes, 150, fields) == want
                compared += len(want)
            files = {name: found.files[name] for name in scope}
            assert bm25.ranked(found.files, scope, hashes, 50) == bm25.ranked(
                files, None, hashes, 50
            )
            documents, df = bm25.frequencies(found.chunks, scope, hashes)
            assert documents == sum(s.size for s in alone.values())
            assert df.tolist() == bm25.frequencies(alone, None, hashes)[1].tolist()
    assert compared > 500
