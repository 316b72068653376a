"""Term-count blobs made in batches are byte for byte the ones made one at a time."""

from __future__ import annotations

import random
import sqlite3
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest

from bot.errors import StoreError
from bot.index.local import termcounts
from bot.index.local.index import LocalIndex
from bot.index.local.termcounts import (
    CHUNK_BODY,
    FILE_BODY,
    MAX_COUNT,
    RECORD,
    chunk_terms,
    chunk_text,
    chunks_terms,
    decode,
    encode,
    file_terms,
    files_terms,
    texts_terms,
)
from bot.text.termarrays import count_chunks
from bot.text.tokens import code_tokens, path_tokens
from tests.support.index_contract import change_set, make_chunk, sample_chunks

WORDS = ["retry", "Retries", "cache_hit", "parseURL", "x", "42", "é", "self", "handler"]


def reference_chunk(path: str, symbol: str, header: str, text: str) -> bytes:
    """One chunk's blob the plain way: count each field's token list."""
    return encode([path_tokens(path), code_tokens(symbol), code_tokens(header), code_tokens(text)])


def reference_file(path: str, blobs: list[bytes]) -> bytes:
    """A file's blob the plain way: its path, then its chunks' bodies summed, by term."""
    body = [r[r["field"] == CHUNK_BODY] for r in map(decode, blobs)]
    merged = np.concatenate(body) if body else np.empty(0, dtype=RECORD)
    terms, where = np.unique(merged["term"], return_inverse=True)
    sums = np.bincount(where.reshape(-1), weights=merged["count"], minlength=terms.size)
    records = np.empty(terms.size, dtype=RECORD)
    records["term"], records["count"], records["field"] = terms, np.minimum(sums, MAX_COUNT), 1
    return encode([path_tokens(path)]) + records.tobytes()


def random_chunks(rnd: random.Random, n: int) -> list[tuple[str, str, str, str]]:
    paths = ["pkg/a.py", "pkg/b_c.py", "docs/x-y.md"]
    out = []
    for _ in range(n):
        text = " ".join(rnd.choices(WORDS, k=rnd.randint(0, 30)))
        out.append(
            (rnd.choice(paths), rnd.choice(["", "Cls.meth"]), rnd.choice(["", "def f():"]), text)
        )
    out.sort(key=lambda item: item[0])  # a file's chunks arrive together, as in an ingest
    return out


def test_texts_terms_match_the_plain_encoding() -> None:
    items = random_chunks(random.Random(3), 300)
    assert texts_terms(items) == [reference_chunk(*item) for item in items]
    assert texts_terms([]) == []


def test_chunks_of_different_paths_interleaved_keep_their_own_path_counts() -> None:
    items = [("a.py", "", "", "x y"), ("b/c.py", "", "", "x"), ("a.py", "", "", "z")]
    assert texts_terms(items) == [reference_chunk(*item) for item in items]


def test_chunks_terms_read_the_chunk_fields() -> None:
    chunk = make_chunk("alpha", "net/retry.py", "return retry(retry)\n", symbol="Backoff.delay")
    assert chunks_terms([chunk]) == texts_terms([chunk_text(chunk)])


def test_files_terms_match_the_per_file_sums() -> None:
    rnd = random.Random(5)
    files = []
    for i in range(60):
        chunks = random_chunks(rnd, rnd.randint(0, 6))
        files.append((f"dir{i % 7}/file{i}.py", texts_terms(chunks)))
    expected = [reference_file(path, blobs) for path, blobs in files]
    assert files_terms(files) == expected
    assert [file_terms(path, blobs) for path, blobs in files] == expected


def test_files_terms_batches_give_the_same_blobs(monkeypatch: pytest.MonkeyPatch) -> None:
    rnd = random.Random(8)
    files = [(f"f{i}.py", texts_terms(random_chunks(rnd, 4))) for i in range(30)]
    whole = files_terms(files)
    monkeypatch.setattr(termcounts, "FILES_BATCH_BYTES", 200)
    assert files_terms(files) == whole


def test_file_body_counts_saturate_at_the_maximum() -> None:
    body = encode([[], [], [], ["a"] * 40_000])
    records = decode(files_terms([("x.py", [body, body])])[0])
    summed = records[records["field"] == FILE_BODY]
    assert summed["count"].tolist() == [MAX_COUNT]


def test_a_damaged_blob_is_refused() -> None:
    with pytest.raises(StoreError):
        files_terms([("x.py", [b"\x00" * (RECORD.itemsize + 1)])])


def test_terms_sharing_their_top_bits_still_sort_exactly() -> None:
    # The fast sort keys on a term's top 40 bits; terms that share them fall back to lexsort.
    high = np.uint64(0xABCDEF0123 << 24)
    term = np.array([high | np.uint64(5), high | np.uint64(1), np.uint64(7), high], dtype=np.uint64)
    doc = np.zeros(term.size, dtype=np.int64)
    order = termcounts._by_doc_and_term(doc, term)
    assert term[order].tolist() == sorted(term.tolist())
    blobs = [encode([[], [], [], ["x"]])]
    assert files_terms([("a.py", blobs), ("b.py", blobs)]) == [
        reference_file("a.py", blobs),
        reference_file("b.py", blobs),
    ]


def test_each_field_counted_in_first_seen_order() -> None:
    blob = texts_terms([("p.py", "", "", "b a b c a b")])[0]
    body = decode(blob)
    body = body[body["field"] == CHUNK_BODY]
    counted = Counter(code_tokens("b a b c a b"))
    assert [int(c) for c in body["count"]] == list(counted.values())


def test_counts_handed_over_in_the_change_set_are_stored_as_given(tmp_path):
    """An ingest's workers count terms ahead; the index stores those blobs and counts the
    rest itself."""
    ahead, fresh = sample_chunks()[:2]
    marker = encode([["marker"]])  # not what `ahead` would count to
    assert marker != chunk_terms(ahead)
    change = replace(change_set("alpha", [ahead, fresh], dim=8), terms={ahead.id: marker})
    with LocalIndex(tmp_path / "index.sqlite") as idx:
        idx.apply(change)
    conn = sqlite3.connect(tmp_path / "index.sqlite")
    stored = dict(conn.execute("SELECT id, terms FROM chunks"))
    conn.close()
    assert stored == {ahead.id: marker, fresh.id: chunk_terms(fresh)}


def test_flat_arrays_pack_to_the_records_counted_in_one_step():
    items = [("a/b.py", "Foo.bar", "class Foo:", "def bar(self): return self.bar_baz")] * 3
    assert termcounts.pack(count_chunks(items)) == termcounts.texts_terms(items)
