"""Searches on some fields use a cached view of the segment and score exactly as before."""

from __future__ import annotations

import random

import numpy as np
import pytest

from bot.index.local import bm25
from tests.support.bm25 import WEIGHTS, hashes, random_corpus, segment


def gathered_scores(
    segments: dict[str, bm25.Segment], query: bm25.Hashes, fields: tuple[float, ...]
) -> dict[int, float]:
    """Scores on some fields computed the first way: recombine each gathered posting's counts."""
    query = np.unique(query)
    chosen = np.asarray(fields, dtype=np.float32)
    parts = []
    df = np.zeros(query.size)
    for seg in segments.values():
        starts, lengths = seg.locate(query)
        index = bm25._ranges(starts, lengths)
        term = np.repeat(np.arange(query.size), lengths)
        counts = seg.counts[index]
        present = (counts[:, chosen > 0] > 0).any(axis=1)
        index, term = index[present], term[present]
        tfw = counts[present].astype(np.float32) @ chosen
        weight = bm25._saturate(tfw, seg.norm[seg.docs[index]])
        df += np.bincount(term, minlength=query.size)
        parts.append((seg, index, term, weight))
    n = sum(seg.size for seg in segments.values())
    idf = np.maximum(np.log((n - df + 0.5) / (df + 0.5)), bm25.MIN_IDF)
    out: dict[int, float] = {}
    for seg, index, term, weight in parts:
        total = np.bincount(seg.docs[index], weights=weight * idf[term], minlength=seg.size)
        out.update(zip(seg.ids[total > 0].tolist(), total[total > 0].tolist(), strict=True))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_field_searches_score_exactly_as_the_gathered_way(seed: int) -> None:
    rnd = random.Random(seed)
    segments = {repo: segment(docs) for repo, docs in random_corpus(rnd).items()}
    for fields in ((2.0, 3.0, 0.0, 0.0), (0.0, 0.0, 1.5, 1.0), (2.0, 0.0, 0.0, 0.0)):
        for _ in range(5):
            query = hashes(*rnd.sample([f"w{i}" for i in range(45)], rnd.randint(1, 6)))
            want = gathered_scores(segments, query, fields)
            got = dict(bm25.search(segments, None, query, 10_000, fields))
            assert got == want  # the same floats, not merely close ones


def test_a_view_is_built_once_per_weights() -> None:
    seg = segment(random_corpus(random.Random(1))["alpha"])
    view = seg.restricted((2.0, 3.0, 0.0, 0.0))
    assert seg.restricted((2.0, 3.0, 0.0, 0.0)) is view
    assert seg.restricted((0.0, 3.0, 0.0, 0.0)) is not view
    assert view.size == seg.size
    assert view.docs.size < seg.docs.size
    assert not view.saturated.flags.writeable


def test_views_of_empty_segments_find_nothing() -> None:
    empty = segment([])
    assert empty.restricted((1.0, 0.0, 0.0, 0.0)).terms.size == 0
    assert bm25.search({"e": empty}, None, hashes("w1"), 5, WEIGHTS) == []
