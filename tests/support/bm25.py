"""Building BM25 segments and random corpora for the engine's tests."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

import numpy as np

from bot.index.local import bm25
from bot.index.local.termcounts import (
    encode,
    term_hash,
)

Doc = tuple[int, list[Counter[str]]]  # rowid, counts per field
WEIGHTS = (2.0, 3.0, 1.5, 1.0)  # LocalIndex's defaults for path, symbol, header, body


def hashes(*tokens: str) -> bm25.Hashes:
    return np.array([term_hash(t) for t in tokens], dtype=np.uint64)


def segment(docs: Sequence[Doc], weights: Sequence[float] = WEIGHTS) -> bm25.Segment:
    blobs = [encode([list(c.elements()) for c in fields]) for _, fields in docs]
    return bm25.build([rid for rid, _ in docs], blobs, weights)


def random_corpus(rnd: random.Random) -> dict[str, list[Doc]]:
    vocab = [f"w{i}" for i in range(40)]
    corpus: dict[str, list[Doc]] = {}
    rid = 0
    for repo in ("alpha", "beta", "gamma"):
        docs = []
        for _ in range(rnd.randint(5, 60)):
            rid += rnd.randint(1, 3)
            fields = [
                Counter(rnd.choices(vocab[:15], k=rnd.randint(1, 4))),
                Counter(rnd.choices(vocab, k=rnd.randint(0, 2))),
                Counter(rnd.choices(vocab, k=rnd.randint(0, 6))),
                Counter(rnd.choices(vocab, weights=range(40, 0, -1), k=rnd.randint(0, 80))),
            ]
            docs.append((rid, fields))
        corpus[repo] = docs
    corpus["empty"] = []
    return corpus
