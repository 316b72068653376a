"""How well the indexed code covers a question: an absolute relevance per hit, and a verdict.

Rank scores (BM25, reciprocal-rank fusion, the file blend) only order hits: the
first is always about 1.0, however poor. Relevance is absolute instead: the share
of the question's concepts a hit contains, each concept weighed by its rarity in
the scope (IDF over the scope's chunks), so "register_error_handler" counts for
more than "function". A concept is a word of the question (its whole form and its
stem), or a named thing, which counts double: an identifier, a `--flag`, a proper
noun or acronym in mid-sentence ("PostgreSQL", "JSON"). A long pasted report is
judged by its first line, the way people title an issue.

The verdict says the evidence does not cover the question when the scope never
mentions something the question names, or when the concepts the scope mentions at
all carry too little of the question's weight. Thresholds were chosen on the
development split asked of the wrong repository and the right one
(bench/notfound.py); see bench/README.md for the figures.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.index.base import Index
from bot.models import Chunk, Hit, line_label
from bot.retrieval.common_words import is_common
from bot.retrieval.mentions import Mention, name_forms, outside_code
from bot.retrieval.query import KEYWORDS, analyze, subject_of
from bot.text.tokens import STOPWORDS, path_tokens, query_terms, tokens_in

NAMED_WEIGHT = 2.0  # a named thing counts as much as two plain words of the same rarity
PRESENT_MIN = 0.65  # below this share of the question's weight in the scope: not covered
MAX_NAMED_IN_SENTENCE = 3
NOT_COVERED = "The indexed code does not seem to"  # how the not-covered sentence begins
NOT_COVERED_CODE = "The indexed code does not"  # ... define or use X: only the docs mention it

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FLAG = re.compile(r"(?<![\w-])--([A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*)")
# A capitalised word after a lower-case word or a comma: a name, not a sentence start.
_PROPER = re.compile(r"(?<=[a-z0-9,;:()'\"] )([A-Z][A-Za-z0-9]+)")
_INLINE_CODE = re.compile(r"`([^`\n]+)`")


@dataclass(frozen=True, slots=True)
class Concept:
    surface: str  # as the question wrote it, for the sentence that names it
    tokens: tuple[str, ...]  # index tokens; the concept is in a text holding any of them
    named: bool
    code: bool = False  # written as code (an identifier, inline code): shown in backticks
    common: bool = False  # everyday question vocabulary ("pick"): its absence says nothing


@dataclass(frozen=True, slots=True)
class Coverage:
    """The question's concepts, their weights, and which ones the scope mentions at all."""

    concepts: tuple[Concept, ...] = ()
    weights: tuple[float, ...] = ()
    in_scope: tuple[bool, ...] = ()
    # named things only docs, tests or examples mention, with those places (`mentions`)
    elsewhere: tuple[tuple[Concept, tuple[Mention, ...]], ...] = ()

    @property
    def present_share(self) -> float:
        """The share of the question's weight the scope mentions somewhere (1.0: all); an
        everyday word the scope never mentions is left out of the sum (see `common_words`)."""
        judged = [
            (w, seen)
            for c, w, seen in zip(self.concepts, self.weights, self.in_scope, strict=True)
            if seen or not c.common
        ]
        total = sum(w for w, _ in judged)
        kept = sum(w for w, seen in judged if seen)
        return kept / total if total else 1.0

    @property
    def missing(self) -> tuple[Concept, ...]:
        """Concepts no chunk in scope mentions (everyday words aside): named things first."""
        absent = [
            c
            for c, seen in zip(self.concepts, self.in_scope, strict=True)
            if not seen and not c.common
        ]
        return tuple(sorted(absent, key=lambda c: not c.named))

    @property
    def covered(self) -> bool:
        if self.elsewhere or any(c.named for c in self.missing):
            return False
        return self.present_share >= PRESENT_MIN

    def relevance(self, tokens: Iterable[str] | frozenset[str]) -> float:
        """The share of the question's weight found among `tokens` (0.0 to 1.0)."""
        have = tokens if isinstance(tokens, frozenset | set) else frozenset(tokens)
        total = sum(self.weights)
        if not total:
            return 0.0
        found = sum(
            w
            for c, w in zip(self.concepts, self.weights, strict=True)
            if any(t in have for t in c.tokens)
        )
        return found / total

    def token_weights(self) -> dict[str, float]:
        """Each concept token's weight (a token of several concepts keeps the largest)."""
        out: dict[str, float] = {}
        for concept, weight in zip(self.concepts, self.weights, strict=True):
            for token in concept.tokens:
                out[token] = max(out.get(token, 0.0), weight)
        return out


@dataclass(frozen=True, slots=True)
class Judgement:
    hits: list[Hit]  # the hits judged, each with its relevance
    coverage: Coverage


class RelevanceJudge:
    """Rates hits and judges coverage against one index's scoped term statistics."""

    def __init__(self, index: Index) -> None:
        self._index = index

    def judge(self, text: str, hits: Sequence[Hit], repos: frozenset[str] | None) -> Judgement:
        coverage = self.coverage(text, repos)
        wanted = frozenset(t for c in coverage.concepts for t in c.tokens)
        rated = [
            Hit(h.chunk, h.score, coverage.relevance(chunk_tokens(h.chunk, wanted))) for h in hits
        ]
        return Judgement(rated, coverage)

    def coverage(self, text: str, repos: frozenset[str] | None) -> Coverage:
        concepts = concepts_of(text)
        if not concepts:
            return Coverage()
        tokens = list(dict.fromkeys(t for c in concepts for t in c.tokens))
        stats = self._index.term_stats(tokens, repos=repos)
        weights, in_scope = [], []
        for concept in concepts:
            df = max(stats.df.get(t, 0) for t in concept.tokens)
            weight = _idf(stats.chunks, df) * (NAMED_WEIGHT if concept.named else 1.0)
            weights.append(weight)
            in_scope.append(df > 0)
        elsewhere = self._elsewhere(concepts, in_scope, repos)
        return Coverage(concepts, tuple(weights), tuple(in_scope), elsewhere)

    def _elsewhere(
        self, concepts: Sequence[Concept], in_scope: Sequence[bool], repos: frozenset[str] | None
    ) -> tuple[tuple[Concept, tuple[Mention, ...]], ...]:
        """The named things of the question that the scope mentions only outside its code."""
        named = [c for c, seen in zip(concepts, in_scope, strict=True) if c.named and seen]
        found: list[tuple[Concept, tuple[Mention, ...]]] = []
        for concept in named[:MAX_NAMED_IN_SENTENCE]:  # a few lookups, however long the text
            places = outside_code(self._index, concept.tokens, repos)
            if places:
                found.append((concept, places))
        return tuple(found)


def chunk_tokens(chunk: Chunk, wanted: frozenset[str]) -> frozenset[str]:
    """Which of `wanted` a chunk is found by, in its text, symbol, header or path."""
    found = wanted.intersection(path_tokens(chunk.path))
    # One search over the three texts: no token spans a line break.
    return found | tokens_in(f"{chunk.symbol}\n{chunk.header}\n{chunk.text}", wanted - found)


def concepts_of(text: str) -> tuple[Concept, ...]:
    """The question's named things, then its other words; a long report's first line only."""
    judged = subject_of(text) or text
    concepts: dict[tuple[str, ...], Concept] = {}
    for concept in _named(judged):
        concepts.setdefault(concept.tokens, concept)
    named = {t for c in concepts.values() for t in c.tokens}
    for word in dict.fromkeys(_WORD.findall(judged)):
        if word[0].isdigit() or word.lower() in STOPWORDS:
            continue
        tokens = tuple(query_terms(word))
        if tokens and not named.intersection(tokens[:1]):
            concepts.setdefault(tokens, Concept(word, tokens, named=False, common=is_common(word)))
    return tuple(concepts.values())


def _named(text: str) -> Iterable[Concept]:
    in_code = {w for span in _INLINE_CODE.findall(text) for w in _WORD.findall(span)}
    for symbol in analyze(text).symbols:
        last = symbol.rsplit(".", 1)[-1]
        token = last.lower().strip("_")
        if len(token) > 2 and token not in KEYWORDS and token not in STOPWORDS:
            yield Concept(
                last, _forms(token, last), named=True, code="_" in last or last in in_code
            )
    for flag in _FLAG.findall(text):
        yield Concept(f"--{flag}", (flag.lower().replace("-", "_"),), named=True, code=True)
    for word in _PROPER.findall(text):
        token = word.lower()
        if len(token) > 2 and token not in KEYWORDS and token not in STOPWORDS:
            yield Concept(word, _forms(token, word), named=True)


def _forms(token: str, surface: str) -> tuple[str, ...]:
    """A name's token and the other forms code may write it in (`RateLimiter`: rate_limiter)."""
    return tuple(dict.fromkeys((token, *name_forms(surface))))


def _idf(documents: int, df: int) -> float:
    """BM25's IDF, never negative; a token in no chunk weighs the most."""
    df = min(max(df, 0), documents)
    return math.log1p((documents - df + 0.5) / (df + 0.5))


def not_covered_sentence(coverage: Coverage) -> str:
    """ "The indexed code does not seem to mention PostgreSQL" ("" when it is covered)."""
    if coverage.covered:
        return ""
    if coverage.elsewhere and not any(c.named for c in coverage.missing):
        return _elsewhere_sentence(coverage.elsewhere)
    names = [f"`{c.surface}`" if c.code else c.surface for c in coverage.missing]
    names = names[:MAX_NAMED_IN_SENTENCE]
    if not names:
        return f"{NOT_COVERED} cover this"
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    return f"{NOT_COVERED} mention {listed}"


_KIND_WORDS = {"doc": "the docs", "test": "the tests", "example": "the examples"}


def _elsewhere_sentence(elsewhere: Sequence[tuple[Concept, tuple[Mention, ...]]]) -> str:
    """ "The indexed code does not define or use `RateLimiter`: only the docs mention it
    (README.md:L1-L4)"."""
    names = [f"`{c.surface}`" for c, _ in elsewhere]
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    places = list(dict.fromkeys(m for _, found in elsewhere for m in found))[:MAX_NAMED_IN_SENTENCE]
    kinds = list(dict.fromkeys(_KIND_WORDS[m.kind] for m in places))
    who = " and ".join(kinds)
    labels = ", ".join(line_label(m.path, m.start_line, m.end_line) for m in places)
    them = "it" if len(names) == 1 else "them"
    return f"{NOT_COVERED_CODE} define or use {listed}: only {who} mention {them} ({labels})"
