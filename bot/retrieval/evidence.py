"""Evidence beyond the bag of words: what a question names, found where it is written.

- **Verbatim identifiers and options.** A compound identifier (`_bench_marker_3`,
  `RewriteHook`) or an option (`--setup-show`) that occurs in the index as a whole token
  marks the chunks holding it: they lead the ranking, ahead of chunks that merely share
  its parts. A chunk's share is the part of the named things (found in the index at all)
  that it holds, each weighed by how few chunks hold it, so a question naming two
  identifiers puts chunks holding both first.
- **Modules named by the question.** The question's words are matched against paths; a
  file whose directory and name carry them ("assertion rewriting" ->
  `assertion/rewrite.py`, "expression parsed" -> `mark/expression.py`) gains whole-file
  relevance, the way a file the question names does.

Both are index queries through the Index protocol (`lexical`, `term_stats`), so
LocalIndex and PineconeIndex give the same evidence.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.index.base import Index
from bot.models import Hit
from bot.text.tokens import path_tokens

VERBATIM_K = 60  # chunks read per named identifier; one written in more is not telling
SELECTIVE = 5  # an identifier in at most this many chunks points at them fully
MAX_VERBATIM = 12  # a long question names many things; only the first ones are looked up
NAMES_K = 100  # chunks whose path matches, read to rank files by name
NAME_RATIO = 0.6  # files whose path holds nearly as much of the question as the best one's
NAME_MIN = 0.1  # below this share of the question, no path stands out


@dataclass(frozen=True, slots=True)
class Verbatim:
    """Chunks holding what the question names, and each one's share of it."""

    hits: list[Hit] = field(default_factory=list)  # most telling first
    share: dict[str, float] = field(default_factory=dict)  # chunk id -> share held (0..1]

    def __bool__(self) -> bool:
        return bool(self.hits)


def verbatim(
    index: Index, groups: Sequence[tuple[str, ...]], repos: frozenset[str] | None
) -> Verbatim:
    """Look each named identifier or option up as a whole token (any of a group's tokens).

    A chunk's `share` is the part of the named things found in the index that it holds,
    each weighed by how selective it is: one written in a handful of chunks points at
    them; one written in `VERBATIM_K` or more (`keep_attrs` in xarray, a test class's name
    in every test method) points nowhere in particular and weighs nothing.
    """
    held: dict[str, float] = {}
    first: dict[str, Hit] = {}
    total = 0.0
    for group in groups[:MAX_VERBATIM]:
        hits = index.lexical(list(group), repos=repos, k=VERBATIM_K)
        weight = selectivity(len(hits))
        if not weight:
            continue  # not in the index, or everywhere: the words around it decide
        total += weight
        for hit in hits:
            held[hit.chunk.id] = held.get(hit.chunk.id, 0.0) + weight
            first.setdefault(hit.chunk.id, hit)
    if not total:
        return Verbatim()
    order = sorted(first, key=lambda cid: -held[cid])  # stable: BM25 order within a share
    return Verbatim([first[cid] for cid in order], {cid: held[cid] / total for cid in order})


def selectivity(chunks: int) -> float:
    """1 for an identifier held by at most SELECTIVE chunks, falling (by the log of the
    count) to 0 at VERBATIM_K; 0 for one held by none."""
    if chunks <= 0 or chunks >= VERBATIM_K:
        return 0.0
    if chunks <= SELECTIVE:
        return 1.0
    return math.log(VERBATIM_K / chunks) / math.log(VERBATIM_K / SELECTIVE)


def named_modules(
    index: Index, concepts: Sequence[tuple[str, ...]], repos: frozenset[str] | None
) -> dict[tuple[str, str], float]:
    """Files whose paths carry the question's words: (repo, path) -> the share of the
    question's weight its path holds, for the files within NAME_RATIO of the best share.

    Each word (`concepts`: a word's tokens) weighs its IDF among the chunks in scope, so a
    word most chunks hold (the package's name in every path) weighs nothing, and a
    directory and file name that together carry the question ("assertion rewriting" and
    `assertion/rewrite.py`) stand well above a path that carries one common word. Weights
    come from the scope alone and the candidates from one path-only search, so what else
    the index holds does not change which files stand out.
    """
    words = [word for word in concepts if word]
    if not words:
        return {}
    stats = index.term_stats([t for word in words for t in word], repos=repos)
    weights = [_idf(stats.chunks, max(stats.df.get(t, 0) for t in word)) for word in words]
    total = sum(weights)
    weighed = [(set(word), w) for word, w in zip(words, weights, strict=True) if w > 0]
    if not total or not weighed:
        return {}
    wanted = [t for tokens, _ in weighed for t in tokens]
    hits = index.lexical(wanted, repos=repos, k=NAMES_K, fields=("path",))
    shares: dict[tuple[str, str], float] = {}
    for key in dict.fromkeys((h.chunk.repo, h.chunk.path) for h in hits):
        held = set(path_tokens(key[1]))
        shares[key] = sum(w for tokens, w in weighed if held & tokens) / total
    best = max(shares.values(), default=0.0)
    if best < NAME_MIN:
        return {}
    return {key: share for key, share in shares.items() if share >= NAME_RATIO * best}


def _idf(chunks: int, df: int) -> float:
    """How telling a word is in scope: BM25's IDF, 0 for a word in half the chunks or more
    (and for one in none: it names no file)."""
    if df <= 0 or 2 * df >= chunks:
        return 0.0
    return math.log((chunks - df + 0.5) / (df + 0.5))
