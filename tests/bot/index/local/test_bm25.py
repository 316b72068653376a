"""The in-memory BM25 engine and the term-count blobs it is built from."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence

import pytest

from bot.errors import StoreError
from bot.index.local import bm25
from bot.index.local.termcounts import (
    MAX_COUNT,
    RECORD,
    chunk_terms,
    chunks_terms,
    decode,
    encode,
    file_terms,
    term_hash,
)
from bot.text.tokens import code_tokens, path_tokens
from tests.support.bm25 import WEIGHTS, Doc, hashes, random_corpus, segment
from tests.support.index_contract import make_chunk


def counts(blob: bytes) -> dict[tuple[int, int], int]:
    return {(int(r["field"]), int(r["term"])): int(r["count"]) for r in decode(blob)}


def reference(
    corpus: Mapping[str, Sequence[Doc]],
    scope: Sequence[str] | None,
    query: Sequence[str],
    k: int,
    weights: Sequence[float],
) -> list[tuple[int, float]]:
    """FTS5's bm25() with column weights, written out plainly; N and n_t count the scope."""
    names = list(corpus) if scope is None else [r for r in scope if r in corpus]
    every = [fields for repo in names for _, fields in corpus[repo]]
    n = len(every)
    idf = {}
    for t in set(query):
        df = sum(any(f[t] for f, w in zip(fields, weights, strict=True) if w) for fields in every)
        idf[t] = max(math.log((n - df + 0.5) / (df + 0.5)), bm25.MIN_IDF)
    out = []
    for repo in scope if scope is not None else corpus:
        docs = corpus.get(repo, [])
        lengths = [sum(sum(f.values()) for f in fields) for _, fields in docs]
        avg = sum(lengths) / len(lengths) if docs else 1.0
        for (rid, fields), length in zip(docs, lengths, strict=True):
            norm = bm25.K1 * (1 - bm25.B + bm25.B * length / avg)
            score = 0.0
            for t in set(query):
                tfw = sum(w * f[t] for f, w in zip(fields, weights, strict=True))
                if tfw:
                    score += idf[t] * tfw * (bm25.K1 + 1) / (tfw + norm)
            if score > 0:
                out.append((rid, score))
    out.sort(key=lambda pair: (-pair[1], pair[0]))
    return out[:k]


# -- term-count blobs ------------------------------------------------------------


def test_term_hash_is_pinned() -> None:
    # Stored blobs outlive processes and versions: the hash must never change.
    assert term_hash("callback") == 0x77B12DAA5236B1D8


def test_encode_counts_each_field() -> None:
    blob = encode([["a", "b", "a"], [], ["a"]])
    assert len(blob) == 3 * RECORD.itemsize
    a, b = term_hash("a"), term_hash("b")
    assert counts(blob) == {(0, a): 2, (0, b): 1, (2, a): 1}
    assert encode([[], []]) == b""


def test_chunk_terms_cover_every_field() -> None:
    chunk = make_chunk(
        "alpha",
        "net/retry_policy.py",
        "return retry(retry)\n",
        symbol="Backoff.delay",
        header="class Backoff:",
    )
    got = counts(chunk_terms(chunk))
    expected: dict[tuple[int, int], int] = {}
    fields = (path_tokens(chunk.path), code_tokens(chunk.symbol), code_tokens(chunk.header))
    for number, tokens in enumerate((*fields, code_tokens(chunk.text))):
        for token, n in Counter(tokens).items():
            expected[(number, term_hash(token))] = n
    assert got == expected
    assert got[(3, term_hash("retry"))] == 2


def test_chunks_terms_match_one_by_one() -> None:
    chunks = [
        make_chunk("alpha", f"m{i}.py", f"def f{i}():\n    return x{i} + shared\n")
        for i in range(5)
    ]
    chunks.append(make_chunk("alpha", "e.py", ""))
    assert chunks_terms(chunks) == [chunk_terms(c) for c in chunks]
    assert chunks_terms([]) == []


def test_file_terms_sum_their_chunks_bodies() -> None:
    one = make_chunk("alpha", "pkg/hooks.py", "hook(hook)\n", symbol="fire", header="class X:")
    two = make_chunk("alpha", "pkg/hooks.py", "hook(other)\n", start=5, symbol="other")
    got = counts(file_terms("pkg/hooks.py", [chunk_terms(one), chunk_terms(two)]))
    assert got[(1, term_hash("hook"))] == 3
    assert got[(1, term_hash("other"))] == 1
    assert (1, term_hash("fire")) not in got  # symbols and headers are not file text
    assert got[(0, term_hash("hooks"))] == 1
    expected = {(0, term_hash(t)) for t in ("lib", "core", "py")}
    assert set(counts(file_terms("lib/core.py", []))) == expected


def test_counts_stop_at_the_record_limit() -> None:
    huge = encode([["a"] * (MAX_COUNT + 10), ["b"]])
    assert counts(huge) == {(0, term_hash("a")): MAX_COUNT, (1, term_hash("b")): 1}
    body = encode([[], [], [], ["a"] * 40_000])
    summed = counts(file_terms("x.py", [body, body]))
    assert summed[(1, term_hash("a"))] == MAX_COUNT


def test_a_blob_of_the_wrong_size_is_a_store_error() -> None:
    with pytest.raises(StoreError) as caught:
        decode(b"\x00" * (RECORD.itemsize + 1))
    assert "damaged" in caught.value.user_message


# -- search ----------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_search_matches_the_plain_formula(seed: int) -> None:
    rnd = random.Random(seed)
    corpus = random_corpus(rnd)
    segments = {repo: segment(docs) for repo, docs in corpus.items()}
    for _ in range(10):
        query = rnd.sample([f"w{i}" for i in range(45)], rnd.randint(1, 6))
        scope = rnd.choice([None, ["alpha"], ["beta", "gamma", "nosuch"], ["empty"]])
        chosen = rnd.choice([None, (2.0, 3.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0)])
        k = rnd.choice([1, 5, 1000])
        got = bm25.search(segments, scope, hashes(*query), k, chosen)
        want = reference(corpus, scope, query, k, chosen or WEIGHTS)
        assert [rid for rid, _ in got] == [rid for rid, _ in want]
        assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-5)


def test_documents_outside_the_scope_do_not_count_for_idf() -> None:
    mine = [(1, [Counter(), Counter(), Counter(), Counter({"lock": 1, "x": 3})])]
    mine += [(i, [Counter(), Counter(), Counter(), Counter({"x": 2})]) for i in range(20, 25)]
    theirs = [(i, [Counter(), Counter(), Counter(), Counter({"lock": 2})]) for i in range(2, 9)]
    alone = bm25.search({"a": segment(mine)}, None, hashes("lock", "x"), 5)
    shared = {"a": segment(mine), "b": segment(theirs)}
    scoped = bm25.search(shared, ["a"], hashes("lock", "x"), 5)
    assert scoped == alone  # "lock" is rare in `a`, however common `b` makes it
    everywhere = bm25.search(shared, None, hashes("lock", "x"), 20)
    assert dict(everywhere)[1] < dict(alone)[1]  # unscoped, the whole index counts


def test_a_term_in_most_documents_still_matches() -> None:
    docs = [(i, [Counter(), Counter(), Counter(), Counter({"self": 1 + i})]) for i in range(1, 6)]
    got = bm25.search({"a": segment(docs)}, None, hashes("self"), 10)
    assert {rid for rid, _ in got} == {1, 2, 3, 4, 5}
    assert all(0 < score < 1e-5 for _, score in got)


def test_ties_go_to_the_lower_rowid() -> None:
    same = [Counter({"p": 1}), Counter(), Counter(), Counter({"q": 2})]
    docs = [(rid, same) for rid in (40, 7, 23, 11)]
    got = bm25.search({"a": segment(docs)}, None, hashes("q"), 3)
    assert [rid for rid, _ in got] == [7, 11, 23]


def test_nothing_to_find() -> None:
    docs = [(1, [Counter({"a": 1}), Counter(), Counter(), Counter({"b": 1})])]
    segments = {"a": segment(docs), "e": segment([])}
    assert bm25.search(segments, None, hashes("zzz"), 5) == []
    assert bm25.search(segments, None, hashes("b"), 0) == []
    assert bm25.search(segments, None, hashes(), 5) == []
    assert bm25.search(segments, ["e"], hashes("b"), 5) == []
    assert bm25.search({}, None, hashes("b"), 5) == []
    assert bm25.search(segments, None, hashes("a"), 5, (0.0, 1.0, 1.0, 1.0)) == []
    assert [rid for rid, _ in bm25.search(segments, None, hashes("b", "b"), 5)] == [1]


def test_records_of_unknown_fields_are_ignored() -> None:
    blob = encode([["a"], [], [], ["b"], [], [], ["c"]])
    seg = bm25.build([1], [blob], WEIGHTS)
    assert [rid for rid, _ in bm25.search({"a": seg}, None, hashes("b"), 5)] == [1]
    assert bm25.search({"a": seg}, None, hashes("c"), 5) == []
