"""Fusing ranked lists, and blending each chunk's evidence with its file's.

A chunk's final score is its fused rank score and its file's whole-file relevance, mixed
by `file_weight`, times the prior of its file's kind (tests, docs, config...), plus a
bonus for holding the identifiers and options the question names verbatim (see
`bot.retrieval.evidence`). Ties keep the fused order, so a ranking is deterministic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from bot.models import FileHit, Hit
from bot.retrieval.intent import Intent, prior
from bot.retrieval.query import QueryAnalysis

T = TypeVar("T")
K = TypeVar("K")

RRF_K = 60
PATH_MENTION_BOOST = 1.0  # a file the question names is as good as the best file
MAX_DEFINITION_BOOSTS = 6  # boost files defining a named symbol only when few are named
VERBATIM_BONUS = 1.0  # holding every named identifier outranks any blend of other evidence
# A file whose path matches the question's words about as well as the best path does counts
# as the best file, and as one the question names when its path holds all of its words.
NAME_BOOST = 1.0


def rrf(
    ranked_lists: Sequence[tuple[float, Sequence[T]]], key: Callable[[T], K]
) -> list[tuple[T, float]]:
    """Weighted reciprocal-rank fusion: (the first item seen per key, its score), best first."""
    scores: dict[K, float] = {}
    first: dict[K, T] = {}
    for weight, items in ranked_lists:
        for rank, item in enumerate(items):
            k = key(item)
            scores[k] = scores.get(k, 0.0) + weight / (RRF_K + rank)
            first.setdefault(k, item)
    order = sorted(scores, key=scores.__getitem__, reverse=True)
    return [(first[k], scores[k]) for k in order]


def fuse(ranked_lists: Sequence[tuple[float, list[Hit]]]) -> list[Hit]:
    """Chunk rankings fused; the chunk object of the first list seen is kept."""
    return [Hit(hit.chunk, score) for hit, score in rrf(ranked_lists, lambda h: h.chunk.id)]


def fuse_files(ranked_lists: Sequence[tuple[float, Sequence[FileHit]]]) -> list[FileHit]:
    """Whole-file rankings fused by weight."""
    fused = rrf(ranked_lists, lambda f: (f.repo, f.path))
    return [FileHit(f.repo, f.path, score) for f, score in fused]


def blend(
    fused: list[Hit],
    files: Sequence[FileHit],
    q: QueryAnalysis,
    intent: Intent,
    *,
    file_weight: float,
    verbatim: Mapping[str, float],
    modules: Mapping[tuple[str, str], float],
) -> list[Hit]:
    """Each chunk's score: its own evidence plus its file's whole-file relevance, times the
    file kind's prior, plus its share of the identifiers named verbatim.

    A file the question names, or one defining a symbol it names (when it names
    few), counts as the best file and as much again; a file among `modules` (the share of
    the question's words its path holds) as the best file and that share of it again.
    """
    if not fused:
        return []
    file_score = {(f.repo, f.path): 1.0 / (RRF_K + rank) for rank, f in enumerate(files)}
    top_file = max(file_score.values(), default=1.0)
    for key, share in modules.items():
        file_score[key] = max(file_score.get(key, 0.0), top_file * (1 + NAME_BOOST * share))
    named = {s.rsplit(".", 1)[-1] for s in q.symbols}
    if len(named) > MAX_DEFINITION_BOOSTS:
        named = set()  # a long issue names many things: no single definition stands out
    mentions = Mentions(q.paths)
    mentioned: dict[str, bool] = {}  # per path: tracebacks name dozens of files
    for hit in fused:
        path = hit.chunk.path
        if path not in mentioned:
            mentioned[path] = mentions.names(path)
        if mentioned[path] or defines(hit.chunk.symbol, named):
            file_score[(hit.chunk.repo, path)] = top_file * (1 + PATH_MENTION_BOOST)
    top_file = max(file_score.values(), default=1.0)
    top_chunk = fused[0].score
    w = file_weight
    factors = {
        p: prior(p, intent, code_question=q.is_code_question, report=q.is_report, named=m)
        for p, m in mentioned.items()
    }
    blended = [
        Hit(
            h.chunk,
            (
                (1 - w) * h.score / top_chunk
                + w * file_score.get((h.chunk.repo, h.chunk.path), 0.0) / top_file
            )
            * factors[h.chunk.path]
            + VERBATIM_BONUS * q.focus * verbatim.get(h.chunk.id, 0.0),
        )
        for h in fused
    ]
    blended.sort(key=lambda h: h.score, reverse=True)
    return blended


def defines(symbol: str, names: set[str]) -> bool:
    """Whether a chunk defines one of `names` (its own or a merged neighbour's last segment)."""
    if not symbol or not names:
        return False
    return any(part.strip().rsplit(".", 1)[-1] in names for part in symbol.split(","))


class Mentions:
    """Whether a path is named by one of a question's paths: exactly, by a tail
    ("flask/app.py" names "src/flask/app.py"), or inside a longer path such as a traceback's
    "/home/me/proj/src/flask/app.py" (only when the path has a directory of its own).

    Built once per question; each path is then a few set lookups, however many paths a
    traceback names.
    """

    def __init__(self, mentioned: Sequence[str]) -> None:
        self._exact = set(mentioned)
        self._stripped = {m.lstrip("/") for m in mentioned}
        self._tails = {m.split("/", i)[-1] for m in mentioned for i in range(1, m.count("/") + 1)}

    def names(self, path: str) -> bool:
        if path in self._exact or ("/" in path and path in self._tails):
            return True
        parts = path.split("/")
        return any("/".join(parts[i:]) in self._stripped for i in range(1, len(parts)))
