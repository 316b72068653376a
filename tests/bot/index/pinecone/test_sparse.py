"""The code-aware BM25 sparse encoder: stable dimensions, BM25 halves, limits."""

from __future__ import annotations

import math

import pytest

from bot.index.pinecone.sparse import (
    MAX_NONZEROS,
    CorpusStats,
    FieldBoosts,
    SparseEncoder,
    SparseVector,
    query_tokens,
    token_index,
)
from bot.text.tokens import code_tokens

ENC = SparseEncoder()


def weights(vec: SparseVector) -> dict[int, float]:
    return dict(zip(vec.indices, vec.values, strict=True))


def test_token_index_is_a_stable_uint32() -> None:
    # Pinned: the dimension of a token must never change between releases, or every
    # stored sparse vector would silently stop matching its queries.
    assert token_index("register_hook") == 0xD3CA73D9
    assert token_index("hook") == token_index("hook")
    assert token_index("hook") != token_index("hooks")
    assert all(0 <= token_index(t) < 2**32 for t in ("a", "é", "x" * 64, ""))


def test_document_uses_the_local_tokenizer() -> None:
    text = "def registerHook(callbacks):\n    HOOKS.append(callbacks)\n"
    vec = ENC.encode_document(text)
    assert set(vec.indices) == {token_index(t) for t in code_tokens(text)}
    assert list(vec.indices) == sorted(vec.indices)


def test_document_weights_saturate_and_stay_below_one() -> None:
    vec = weights(ENC.encode_document("retry " * 1 + "other " * 20))
    many = weights(ENC.encode_document("retry " * 8 + "other " * 13))
    r = token_index("retry")
    assert 0 < vec[r] < many[r] < 1
    tf, length = 8.0, 21.0
    norm = ENC.k1 * (1 - ENC.b + ENC.b * length / ENC.avgdl)
    assert many[r] == pytest.approx(tf / (tf + norm), abs=1e-6)


def test_longer_documents_weigh_a_term_less() -> None:
    short = weights(ENC.encode_document("webhook retry"))
    long = weights(ENC.encode_document("webhook retry " + "filler words here " * 60))
    w = token_index("webhook")
    assert long[w] < short[w]


def test_symbol_and_path_tokens_are_boosted() -> None:
    body_only = weights(ENC.encode_document("def parse(s): return s"))
    as_symbol = weights(ENC.encode_document("def parse(s): return s", symbol="parse"))
    in_path = weights(ENC.encode_document("x = 1", path="parsers/parse.py"))
    p = token_index("parse")
    assert as_symbol[p] > body_only[p]
    assert p in in_path and token_index("parsers") in in_path and token_index("py") in in_path
    flat = SparseEncoder(boosts=FieldBoosts(path=1, symbol=1, header=1, body=1))
    assert weights(flat.encode_document("parse", symbol="parse"))[p] < as_symbol[p]


def test_at_most_1000_nonzeros_keeping_the_heaviest() -> None:
    rare = " ".join(f"word{i}" for i in range(1500))
    text = rare + " " + "frequent " * 50
    vec = ENC.encode_document(text)
    assert len(vec) == MAX_NONZEROS
    assert token_index("frequent") in vec.indices
    assert len(set(vec.indices)) == len(vec.indices)


def test_empty_text_gives_an_empty_vector() -> None:
    assert len(ENC.encode_document("")) == 0
    assert len(ENC.encode_document("!!! ... ;;;")) == 0
    assert len(ENC.encode_query([], CorpusStats(10))) == 0


def test_query_weights_are_idf_normalised_to_sum_to_one() -> None:
    common, rare = token_index("data"), token_index("webhook")
    stats = CorpusStats(documents=100, df={common: 90, rare: 2})
    q = weights(ENC.encode_query(["data", "webhook"], stats))
    assert q[rare] > q[common] > 0
    assert sum(q.values()) == pytest.approx(1.0, abs=1e-5)
    idf_rare = math.log1p((100 - 2 + 0.5) / (2 + 0.5))
    idf_common = math.log1p((100 - 90 + 0.5) / (90 + 0.5))
    assert q[rare] / q[common] == pytest.approx(idf_rare / idf_common, rel=1e-4)


def test_query_without_statistics_is_uniform() -> None:
    q = ENC.encode_query(["alpha", "beta", "alpha"], None)
    assert list(q.values) == [0.5, 0.5]


def test_inconsistent_statistics_never_give_negative_weights() -> None:
    t = token_index("x")
    q = ENC.encode_query(["x", "y"], CorpusStats(documents=3, df={t: 50}))
    assert all(v > 0 for v in q.values)


def test_sparse_score_is_bm25_scaled_into_zero_one() -> None:
    docs = ["retry the webhook", "retry " * 5 + "later", "unrelated words only"]
    encoded = [ENC.encode_document(d) for d in docs]
    df: dict[int, int] = {}
    for vec in encoded:
        for i in vec.indices:
            df[i] = df.get(i, 0) + 1
    query = ENC.encode_query(query_tokens(["retry", "webhook"]), CorpusStats(len(docs), df))
    scores = [query.dot(vec) for vec in encoded]
    assert scores[0] > scores[1] > scores[2] == 0
    assert all(0 <= s < 1 for s in scores)


def test_query_tokens_normalises_raw_terms() -> None:
    assert query_tokens(["registerHook", "hook", "HOOK"]) == ["registerhook", "register", "hook"]
    assert query_tokens(["", "  ", "!!"]) == []


def test_vector_helpers() -> None:
    vec = SparseVector((1, 5), (0.5, 0.25))
    assert vec.as_dict() == {"indices": [1, 5], "values": [0.5, 0.25]}
    assert vec.scaled(2.0) == SparseVector((1, 5), (1.0, 0.5))
    assert vec.dot(SparseVector((5, 9), (4.0, 1.0))) == 1.0
    with pytest.raises(ValueError, match="same length"):
        SparseVector((1,), ())


def test_encoder_parameters_are_validated() -> None:
    with pytest.raises(ValueError):
        SparseEncoder(b=1.5)
    with pytest.raises(ValueError):
        SparseEncoder(max_nonzeros=1001)


def test_query_tokens_keep_option_tokens_whole() -> None:
    assert query_tokens(["__setup_show", "setup_show"]) == [
        "__setup_show",
        "setup_show",
        "setup",
        "show",
    ]
    doc = ENC.encode_document('group.addoption("--setup-show", help="show fixture setup")')
    assert token_index("__setup_show") in doc.indices


def test_tokens_no_document_holds_take_no_share_of_the_query() -> None:
    known, joined = token_index("teardown"), token_index("fixturestorn")
    stats = CorpusStats(documents=100, df={known: 4})
    q = ENC.encode_query(["teardown", "fixturestorn"], stats)
    assert list(q.indices) == [known] and list(q.values) == [1.0]
    assert joined not in q.indices
    # without statistics nothing is known to be absent: every token weighs the same
    assert len(ENC.encode_query(["teardown", "fixturestorn"], None)) == 2
