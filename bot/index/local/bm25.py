"""An in-memory BM25 engine: postings per term in numpy arrays, one segment per repository.

The formula is SQLite FTS5's `bm25()` with column weights, so rankings carry
over from the FTS5 index this replaces: a term's frequency is summed over the
fields with the caller's weights (`tf' = sum w_f * tf_f`), documents are
length-normalised by their total token count `D`, and

    score(d) = sum over terms t of idf(t) * tf' * (k1 + 1) / (tf' + k1 * (1 - b + b * D / avgD))
    idf(t)   = max(log((N - n_t + 0.5) / (n_t + 0.5)), 1e-6)

`N` and `n_t` (documents holding t in the searched fields) count the segments in
the search's scope, every segment when it has none: within one search, scores of
different repositories stay comparable, and a search scoped to some repositories
ranks and scores exactly as if no other repository were indexed (nothing of another
segment is read). `avgD` is the segment's own, which lets one repository's segment
be rebuilt without touching the rest.

A segment is immutable once built. For the default fields the saturated term
frequency of every posting is precomputed, so a query is a gather, a multiply
and a `bincount`. A query on a subset of fields runs the same way on a view of
the segment built for those field weights on first use and kept with it: only
the postings with the term in a chosen field, their tf' recombined from the
per-field counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from bot.index.local.termcounts import RECORD, decode

K1 = 1.2
B = 0.75
LONG_POSTINGS = 4096  # a term's postings from this many on are copied, not indexed
MIN_IDF = 1e-6  # FTS5's floor: a term in most documents still counts, barely

Floats = npt.NDArray[np.float64]
Hashes = npt.NDArray[np.uint64]
Ints = npt.NDArray[np.int64]


class DamagedSegment(Exception):
    """A segment whose postings point past its documents (a damaged segment file)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"segment {name!r} is damaged")
        self.name = name


@dataclass(frozen=True, slots=True)
class Segment:
    """The documents of one repository (chunks, or files) and their postings."""

    ids: Ints  # rowid of each document
    terms: Hashes  # (V,) sorted term hashes
    indptr: Ints  # (V + 1,) postings of terms[i] are [indptr[i], indptr[i + 1])
    docs: npt.NDArray[np.int32]  # (P,) document of each posting, an index into ids
    saturated: npt.NDArray[np.float32]  # (P,) tf' * (k1 + 1) / (tf' + norm), default weights
    counts: npt.NDArray[np.uint16]  # (P, fields) raw counts
    norm: npt.NDArray[np.float32]  # (n,) k1 * (1 - b + b * D / avgD)
    # Views for queries on some fields, by field weights (see `restricted`).
    views: dict[tuple[float, ...], Segment] = field(default_factory=dict, repr=False, compare=False)

    @property
    def size(self) -> int:
        return int(self.ids.size)

    def restricted(self, fields: tuple[float, ...]) -> Segment:
        """The segment as a query on the fields weighted > 0 in `fields` sees it.

        Built once per weights and kept (the segment never changes; two threads
        building it at once build the same thing).
        """
        view = self.views.get(fields)
        if view is None:
            view = self.views[fields] = _restrict(self, fields)
        return view

    def locate(self, hashes: Hashes) -> tuple[Ints, Ints]:
        """For each query hash: the start of its postings and how many (0 if absent).

        Terms are unique, so a hash's left and right insertion points differ exactly when
        it is present; `indptr`, one longer than `terms`, turns both into posting bounds,
        and an absent hash gets an empty range without a compare or a clamp.
        """
        starts = self.indptr[np.searchsorted(self.terms, hashes, "left")]
        return starts, self.indptr[np.searchsorted(self.terms, hashes, "right")] - starts


def build(ids: Sequence[int], blobs: Sequence[bytes], weights: Sequence[float]) -> Segment:
    """Index the documents `ids` from their term-count blobs, with default field `weights`."""
    sizes = np.fromiter(map(len, blobs), dtype=np.int64, count=len(ids))
    return build_packed(ids, sizes, b"".join(blobs), weights)


def build_packed(
    ids: Sequence[int], sizes: Ints, packed: bytes | bytearray, weights: Sequence[float]
) -> Segment:
    """`build` from the blobs laid end to end (`packed`) and each one's size in bytes: a
    caller streaming rows from SQLite never holds them twice."""
    n = len(ids)
    width = len(weights)
    lengths = sizes // RECORD.itemsize
    # Peak memory matters here (an ingest builds its repository's segment): intermediates
    # are dropped as soon as they are used, and indices kept narrow.
    records = decode(packed)
    del packed
    doc = np.repeat(np.arange(n, dtype=np.int32), lengths)
    keep = records["field"] < width  # a record for an unknown field is ignored, not fatal
    if not keep.all():
        records, doc = records[keep], doc[keep]
    del keep
    order = np.argsort(records["term"], kind="stable")  # docs stay ascending within a term
    term = records["term"][order]
    doc = doc[order]
    field = records["field"][order]
    count = records["count"][order]
    del records, order
    first = np.ones(term.size, dtype=bool)
    first[1:] = (term[1:] != term[:-1]) | (doc[1:] != doc[:-1])
    posting: npt.NDArray[np.signedinteger[Any]] = np.cumsum(
        first, dtype=np.int32 if first.size < 2**31 else np.int64
    )
    posting -= 1  # records of one (term, doc) pair share a posting
    n_post = int(posting[-1]) + 1 if posting.size else 0
    counts = np.zeros((n_post, width), dtype=np.uint16)
    counts[posting, field] = count
    del posting, field
    post_term, post_doc = term[first], doc[first]
    del term
    starts = np.ones(n_post, dtype=bool)
    starts[1:] = post_term[1:] != post_term[:-1]
    total = np.bincount(doc, weights=count, minlength=n).astype(np.float64)
    del doc, count, first
    norm = _norm(total)
    tfw = counts.astype(np.float32) @ np.asarray(weights, dtype=np.float32)
    segment = Segment(
        ids=np.asarray(ids, dtype=np.int64),
        terms=post_term[starts],
        indptr=np.append(np.flatnonzero(starts), n_post).astype(np.int64),
        docs=post_doc,
        saturated=_saturate(tfw, norm[post_doc]),
        counts=counts,
        norm=norm,
    )
    for array in (segment.ids, segment.terms, segment.indptr, segment.docs, segment.saturated):
        array.flags.writeable = False  # shared by every thread: nothing may write to it
    segment.counts.flags.writeable = segment.norm.flags.writeable = False
    return segment


def _restrict(segment: Segment, fields: tuple[float, ...]) -> Segment:
    """Postings with the term in a chosen field, tf' recombined with those fields' weights."""
    chosen = np.asarray(fields, dtype=np.float32)
    present = (segment.counts[:, chosen > 0] > 0).any(axis=1)
    counts = segment.counts[present]
    docs = segment.docs[present]
    before = np.concatenate(([0], np.cumsum(present)))  # present postings before each one
    per_term = before[segment.indptr[1:]] - before[segment.indptr[:-1]]
    kept = per_term > 0
    view = Segment(
        ids=segment.ids,
        terms=segment.terms[kept],
        indptr=np.append(0, np.cumsum(per_term[kept])).astype(np.int64),
        docs=docs,
        saturated=_saturate(counts.astype(np.float32) @ chosen, segment.norm[docs]),
        counts=counts,
        norm=segment.norm,
    )
    for array in (view.terms, view.indptr, view.docs, view.saturated, view.counts):
        array.flags.writeable = False
    return view


def _norm(total: Floats) -> npt.NDArray[np.float32]:
    mean = float(total.mean()) if total.size else 0.0
    return (K1 * (1.0 - B + B * total / (mean or 1.0))).astype(np.float32)


def _saturate(
    tfw: npt.NDArray[np.floating], norm: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    return (tfw * (K1 + 1.0) / (tfw + norm)).astype(np.float32)


def _ranges(starts: Ints, lengths: Ints) -> Ints:
    """Concatenated ranges [start, start + length) as one index array."""
    total = int(lengths.sum())
    if total == 0:
        return np.empty(0, dtype=np.int64)
    offsets = np.cumsum(lengths) - lengths
    return np.repeat(starts - offsets, lengths) + np.arange(total, dtype=np.int64)


def search(
    segments: Mapping[str, Segment],
    scope: Iterable[str] | None,
    hashes: Hashes,
    k: int,
    fields: Sequence[float] | None = None,
) -> list[tuple[int, float]]:
    """(rowid, score) of the best `k` documents of the segments in `scope`, best first.

    `fields`: weights per field for a query on some fields (0 leaves a field
    out); None uses the defaults the segments were built with.
    """
    return [(rid, score) for _, rid, score in ranked(segments, scope, hashes, k, fields)]


def ranked(
    segments: Mapping[str, Segment],
    scope: Iterable[str] | None,
    hashes: Hashes,
    k: int,
    fields: Sequence[float] | None = None,
) -> list[tuple[str, int, float]]:
    """`search`, each hit with the name of its segment (a file hit then needs no lookup)."""
    hashes = np.unique(hashes)
    if k <= 0 or hashes.size == 0:
        return []
    names = in_scope(segments, scope)
    if fields is not None:  # n_t counts documents with the term in the chosen fields
        chosen = tuple(float(w) for w in fields)
        segments = {name: segments[name].restricted(chosen) for name in names}
    located = [segments[name].locate(hashes) for name in names]
    df = np.zeros(hashes.size, dtype=np.float64)
    for _, lengths in located:
        df += lengths
    n_docs = sum(segments[name].size for name in names)
    idf = np.maximum(np.log((n_docs - df + 0.5) / (df + 0.5)), MIN_IDF)
    best = _Best(k)
    for number, name in enumerate(names):
        seg = segments[name]
        starts, lengths = located[number]
        postings = _postings(seg, idf, starts, lengths)
        if postings is not None:
            best.add(number, seg.ids, _summed(name, seg, *postings))
    return best.ranked(names)


class _Best:
    """The documents that can still be among the best k, gathered segment by segment.

    Once k are held, a document scoring below the k-th best held cannot be among the
    final k, so each later segment gives only its documents at or above that floor
    (ties kept: the lower rowid wins them at the end).
    """

    def __init__(self, k: int) -> None:
        self.k = k
        self.floor = 0.0  # scores are never negative: a document scoring 0 is no hit
        self.scores = np.empty(0, dtype=np.float64)
        self.ids = np.empty(0, dtype=np.int64)
        self.owners = np.empty(0, dtype=np.int64)

    def add(self, owner: int, ids: Ints, total: Floats) -> None:
        hit = np.flatnonzero(total >= self.floor) if self.floor else np.flatnonzero(total)
        if hit.size == 0:
            return
        scores = np.concatenate((self.scores, total[hit]))
        ids = np.concatenate((self.ids, ids[hit]))
        owners = np.concatenate((self.owners, np.full(hit.size, owner, dtype=np.int64)))
        if scores.size > self.k:
            self.floor = float(np.partition(scores, scores.size - self.k)[scores.size - self.k])
            keep = np.flatnonzero(scores >= self.floor)
            scores, ids, owners = scores[keep], ids[keep], owners[keep]
        self.scores, self.ids, self.owners = scores, ids, owners

    def ranked(self, names: Sequence[str]) -> list[tuple[str, int, float]]:
        """(segment name, rowid, score) best first, ties broken by the lower rowid
        (as the FTS5 query did)."""
        order = np.lexsort((self.ids, -self.scores))[: self.k]
        return [
            (names[owner], rid, score)
            for owner, rid, score in zip(
                self.owners[order].tolist(),
                self.ids[order].tolist(),
                self.scores[order].tolist(),
                strict=True,
            )
        ]


def _postings(
    seg: Segment, idf: Floats, starts: Ints, lengths: Ints
) -> tuple[npt.NDArray[np.int32], Floats] | None:
    """The documents of the query terms' postings and each one's tf' * idf, term after
    term: the order `bincount` sums them in, so every score is the same float sum.

    A single term's postings are a slice of the arrays: no index array, no gather.
    """
    present = np.flatnonzero(lengths)
    if present.size == 0:
        return None
    if present.size == 1:
        term = int(present[0])
        start = int(starts[term])
        end = start + int(lengths[term])
        return seg.docs[start:end], np.multiply(
            seg.saturated[start:end], idf[term], dtype=np.float64
        )
    docs, saturated = _gathered(seg, starts, lengths)
    # float32 tf' times float64 idf is computed in float64 either way
    return docs, np.multiply(saturated, np.repeat(idf, lengths), dtype=np.float64)


def _gathered(
    seg: Segment, starts: Ints, lengths: Ints
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float32]]:
    """`docs` and `saturated` of the terms' postings, in term order.

    A long posting list is copied as a slice; the short ones between two long ones go
    through one index array (building and following an index costs more per posting
    than a copy, a slice per term more per term than an index).
    """
    long = np.flatnonzero(lengths >= LONG_POSTINGS).tolist()
    if not long:
        index = _ranges(starts, lengths)
        return seg.docs[index], seg.saturated[index]
    docs: list[npt.NDArray[np.int32]] = []
    saturated: list[npt.NDArray[np.float32]] = []
    after = 0  # the first term not yet copied
    for term in [*long, lengths.size]:
        if term > after:  # the short terms before this long one
            index = _ranges(starts[after:term], lengths[after:term])
            docs.append(seg.docs[index])
            saturated.append(seg.saturated[index])
        if term < lengths.size:
            start = int(starts[term])
            end = start + int(lengths[term])
            docs.append(seg.docs[start:end])
            saturated.append(seg.saturated[start:end])
        after = term + 1
    return np.concatenate(docs), np.concatenate(saturated)


def _summed(name: str, seg: Segment, docs: npt.NDArray[np.int32], weights: Floats) -> Floats:
    """Each document's score: the weights of its postings summed."""
    try:
        total = np.bincount(docs, weights=weights, minlength=seg.size)
    except ValueError as exc:  # a negative document number
        raise DamagedSegment(name) from exc
    if total.size > seg.size:
        raise DamagedSegment(name)
    return total.astype(np.float64, copy=False)


def in_scope(segments: Mapping[str, Segment], scope: Iterable[str] | None) -> list[str]:
    """The names of the segments a search in `scope` reads (every one for None), once each."""
    if scope is None:
        return list(segments)
    return [name for name in dict.fromkeys(scope) if name in segments]


def frequencies(
    segments: Mapping[str, Segment], scope: Iterable[str] | None, hashes: Hashes
) -> tuple[int, Ints]:
    """Documents in the `scope` segments, and how many of them hold each of `hashes`."""
    names = in_scope(segments, scope)
    df = np.zeros(hashes.size, dtype=np.int64)
    for name in names:
        df += segments[name].locate(hashes)[1]
    return sum(segments[name].size for name in names), df
