"""From a question to ranked chunks and a compact, cited context.

Stages: lexical search over all fields, an exact pass over symbols and paths
for the identifiers in the question, dense search when an embedder is set;
reciprocal-rank fusion; each chunk's score blended with its file's
whole-file relevance; neighbouring chunks of one file merged; the best blocks
fitted into a token budget.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

from bot.errors import BotError
from bot.index.base import HybridIndex, Index
from bot.llm.embeddings import Embedder
from bot.models import FileHit, Hit, Usage, line_label
from bot.retrieval.intent import Intent, intent_of, prior
from bot.retrieval.query import QueryAnalysis, analyze
from bot.retrieval.relevance import Coverage, RelevanceJudge
from bot.retrieval.symbol_facts import SymbolFacts, SymbolFinder, SymbolLookup, exact_first
from bot.text.counting import count_tokens
from bot.text.tokens import query_terms

log = logging.getLogger(__name__)

T = TypeVar("T")
K = TypeVar("K")

RRF_K = 60
LEXICAL_K = 150
EXACT_K = 60
DENSE_K = 100
FILE_K = 100
EXACT_WEIGHT = 1.5  # identifiers and paths in a question outrank plain words
PATH_MENTION_BOOST = 1.0  # a file the question names is as good as the best file
MAX_DEFINITION_BOOSTS = 6  # boost files defining a named symbol only when few are named
HYDE_WEIGHT = 0.7  # the hypothetical code helps, but the question itself leads
HYDE_TERMS = 60
SUBJECT_WEIGHT = 1.0  # a long question's first line counts as much again as the whole of it
HYDE_THREADS = 4  # questions whose hypothetical snippet is being written at once
JUDGED = 20  # hits of an answer whose relevance is judged (more than its sources)

Expander = Callable[[str], tuple[str, Usage]]


@dataclass(frozen=True, slots=True)
class Source:
    """One numbered block of context: contiguous lines of one file."""

    repo: str
    path: str
    language: str
    start_line: int
    end_line: int
    symbol: str
    text: str
    score: float

    @property
    def label(self) -> str:
        return line_label(self.path, self.start_line, self.end_line)


@dataclass(frozen=True, slots=True)
class Retrieval:
    analysis: QueryAnalysis
    hits: list[Hit]  # blended ranking of chunks, best first
    sources: list[Source]  # merged and budgeted context, best first
    usage: Usage = field(default_factory=Usage)  # embedding tokens, plus HyDE's when it ran
    timings: dict[str, float] = field(default_factory=dict)
    symbols: SymbolFacts | None = None  # exact findings for a symbol or overview question
    coverage: Coverage = field(default_factory=Coverage)  # what of the question the scope holds


class Retriever:
    def __init__(
        self,
        index: Index,
        embedder: Embedder | None = None,
        *,
        file_weight: float = 0.35,
        context_tokens: int = 6000,
        max_sources: int = 12,
        expander: Expander | None = None,
        symbols: SymbolLookup | None = None,
    ) -> None:
        self._index = index
        self.symbol_finder = SymbolFinder(index, symbols)
        self._judge = RelevanceJudge(index)
        self._embedder = embedder
        self._expander = expander
        # HyDE waits on the model while the question's own searches use the CPU: both at once.
        self._hyde_pool = (
            ThreadPoolExecutor(HYDE_THREADS, thread_name_prefix="hyde") if expander else None
        )
        self._file_weight = file_weight
        self._context_tokens = context_tokens
        self._max_sources = max_sources

    def retrieve(self, text: str, repos: frozenset[str] | None) -> Retrieval:
        started = time.perf_counter()
        analysis = analyze(text)
        hits, usage, hyde_seconds = self._ranked(analysis, repos)
        ranked_at = time.perf_counter()
        facts = self.symbol_finder.find(text, repos)  # None unless the table answers exactly
        hits = exact_first(facts, hits)
        looked_up_at = time.perf_counter()
        sources = self._context(hits)
        judged = self._judge.judge(text, hits[:JUDGED], repos)
        timings = {
            "search": ranked_at - started,
            "symbols": looked_up_at - ranked_at,
            "context": time.perf_counter() - looked_up_at,
        }
        if hyde_seconds is not None:
            timings["hyde"] = hyde_seconds  # within "search": it ran alongside
        hits = judged.hits + hits[JUDGED:]
        return Retrieval(analysis, hits, sources, usage, timings, facts, judged.coverage)

    def search(self, text: str, repos: frozenset[str] | None, top_k: int = 10) -> list[Hit]:
        """The best `top_k` hits, each with its relevance."""
        hits, _, _ = self._ranked(analyze(text), repos)
        return self._judge.judge(text, hits[:top_k], repos).hits

    def _ranked(
        self, q: QueryAnalysis, repos: frozenset[str] | None
    ) -> tuple[list[Hit], Usage, float | None]:
        """The blended ranking, its usage, and how long HyDE took (None when it did not run)."""
        exact_terms = q.exact_terms  # computed from the symbols and paths on each access
        terms = list(dict.fromkeys((*q.terms, *exact_terms)))
        if not terms and not q.text.strip():
            return [], Usage(), None
        expanding = self._expand(q.text)
        ranked_lists: list[tuple[float, list[Hit]]] = []
        hybrid = self._hybrid(q.text, terms, repos)
        if hybrid is not None:
            hits, tokens = hybrid
            ranked_lists.append((1.0, hits))
        elif terms:
            ranked_lists.append((1.0, self._index.lexical(terms, repos=repos, k=LEXICAL_K)))
        if exact_terms:
            exact = self._index.lexical(
                list(exact_terms), repos=repos, k=EXACT_K, fields=("symbol", "path")
            )
            ranked_lists.append((EXACT_WEIGHT, exact))
        if hybrid is None:
            dense, tokens = self._dense(q.text, repos)
            if dense:
                ranked_lists.append((1.0, dense))
        hypothetical, usage, hyde_seconds = "", Usage(), None
        if expanding is not None:
            (hypothetical, usage), hyde_seconds = expanding.result()
        if hypothetical:
            hypo_terms = query_terms(hypothetical)[:HYDE_TERMS]
            if hypo_terms:
                hypo_hits = self._index.lexical(hypo_terms, repos=repos, k=LEXICAL_K)
                ranked_lists.append((HYDE_WEIGHT, hypo_hits))
            hypo_dense, hypo_tokens = self._dense(hypothetical, repos)
            if hypo_dense:
                ranked_lists.append((HYDE_WEIGHT, hypo_dense))
            tokens += hypo_tokens
        usage = usage + Usage(embedding_tokens=tokens)
        files = self._index.files_lexical(terms, repos=repos, k=FILE_K) if terms else []
        subject = query_terms(q.subject) if q.subject else []
        if subject:
            # The subject line ranks again on its own, for chunks and for whole files.
            ranked_lists.append(
                (SUBJECT_WEIGHT, self._index.lexical(subject, repos=repos, k=LEXICAL_K))
            )
            files = _fuse_files(files, self._index.files_lexical(subject, repos=repos, k=FILE_K))
        return self._blend(_fuse(ranked_lists), files, q, intent_of(q.text)), usage, hyde_seconds

    def _expand(self, text: str) -> Future[tuple[tuple[str, Usage], float]] | None:
        """Start writing the hypothetical snippet (HyDE); None when HyDE is off."""
        expander, pool = self._expander, self._hyde_pool
        if expander is None or pool is None:
            return None

        def timed() -> tuple[tuple[str, Usage], float]:
            started = time.perf_counter()
            return expander(text), time.perf_counter() - started

        return pool.submit(timed)

    def _hybrid(
        self, text: str, terms: list[str], repos: frozenset[str] | None
    ) -> tuple[list[Hit], int] | None:
        """One dense + sparse query, when the store does that itself (None otherwise)."""
        if self._embedder is None or not isinstance(self._index, HybridIndex):
            return None
        vector: list[float] | None = None
        tokens = 0
        try:
            embedded = self._embedder.embed_query(text)
            vector, tokens = embedded.vector, embedded.tokens
        except BotError as exc:
            log.warning("dense half of hybrid search skipped: %s", exc.detail or exc.user_message)
        hits = self._index.hybrid(vector, terms, repos=repos, k=LEXICAL_K)
        return hits, tokens

    def _dense(self, text: str, repos: frozenset[str] | None) -> tuple[list[Hit], int]:
        if self._embedder is None:
            return [], 0
        tokens = 0
        try:
            embedded = self._embedder.embed_query(text)
            tokens = embedded.tokens  # paid for even if the dense search then fails
            hits = self._index.dense(embedded.vector, repos=repos, k=DENSE_K)
        except BotError as exc:
            # Dense search is an improvement, not a requirement: degrade to lexical.
            log.warning("dense search skipped: %s", exc.detail or exc.user_message)
            return [], tokens
        return hits, tokens

    def _blend(
        self, fused: list[Hit], files: Sequence[FileHit], q: QueryAnalysis, intent: Intent
    ) -> list[Hit]:
        """Each chunk's score: its own evidence plus its file's whole-file relevance, times the
        file kind's prior.

        A file the question names, or one defining a symbol it names (when it names
        few), counts as the best file.
        """
        if not fused:
            return []
        file_score = {(f.repo, f.path): 1.0 / (RRF_K + rank) for rank, f in enumerate(files)}
        top_file = max(file_score.values(), default=1.0)
        named = {s.rsplit(".", 1)[-1] for s in q.symbols}
        if len(named) > MAX_DEFINITION_BOOSTS:
            named = set()  # a long issue names many things: no single definition stands out
        mentions = _Mentions(q.paths)
        mentioned: dict[str, bool] = {}  # per path: tracebacks name dozens of files
        for hit in fused:
            path = hit.chunk.path
            if path not in mentioned:
                mentioned[path] = mentions.names(path)
            if mentioned[path] or _defines(hit.chunk.symbol, named):
                file_score[(hit.chunk.repo, path)] = top_file * (1 + PATH_MENTION_BOOST)
        top_file = max(file_score.values(), default=1.0)
        top_chunk = fused[0].score
        w = self._file_weight
        code_question = q.is_code_question
        factors = {p: prior(p, intent, code_question=code_question) for p in mentioned}
        blended = [
            Hit(
                h.chunk,
                (
                    (1 - w) * h.score / top_chunk
                    + w * file_score.get((h.chunk.repo, h.chunk.path), 0.0) / top_file
                )
                * factors[h.chunk.path],
            )
            for h in fused
        ]
        blended.sort(key=lambda h: h.score, reverse=True)
        return blended

    def _context(self, hits: Sequence[Hit]) -> list[Source]:
        blocks = merge_neighbours(hits[: self._max_sources * 2])
        chosen: list[Source] = []
        budget = self._context_tokens
        for block in blocks:
            if len(chosen) >= self._max_sources:
                break
            cost = count_tokens(block.text) + 20
            if cost > budget:
                if chosen:
                    continue
                block = _truncate(block, budget)
                cost = budget
            chosen.append(block)
            budget -= cost
        return chosen


def _rrf(
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


def _fuse(ranked_lists: Sequence[tuple[float, list[Hit]]]) -> list[Hit]:
    """Chunk rankings fused; the chunk object of the first list seen is kept."""
    return [Hit(hit.chunk, score) for hit, score in _rrf(ranked_lists, lambda h: h.chunk.id)]


def _fuse_files(*lists: Sequence[FileHit]) -> list[FileHit]:
    """Whole-file rankings fused, each list weighing the same."""
    fused = _rrf([(1.0, hits) for hits in lists], lambda f: (f.repo, f.path))
    return [FileHit(f.repo, f.path, score) for f, score in fused]


def _defines(symbol: str, names: set[str]) -> bool:
    """Whether a chunk defines one of `names` (its own or a merged neighbour's last segment)."""
    if not symbol or not names:
        return False
    return any(part.strip().rsplit(".", 1)[-1] in names for part in symbol.split(","))


class _Mentions:
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


def merge_neighbours(hits: Sequence[Hit]) -> list[Source]:
    """Merge overlapping or adjacent chunks of one file into one block, best block first."""
    by_file: dict[tuple[str, str], list[Hit]] = {}
    for hit in hits:
        by_file.setdefault((hit.chunk.repo, hit.chunk.path), []).append(hit)
    blocks: list[Source] = []
    for group in by_file.values():
        group.sort(key=lambda h: h.chunk.start_line)
        run: list[Hit] = [group[0]]
        for hit in group[1:]:
            if hit.chunk.start_line <= max(h.chunk.end_line for h in run) + 1:
                run.append(hit)
            else:
                blocks.append(_block(run))
                run = [hit]
        blocks.append(_block(run))
    blocks.sort(key=lambda b: b.score, reverse=True)
    return blocks


def _block(run: Sequence[Hit]) -> Source:
    lines: dict[int, str] = {}
    for hit in run:
        c = hit.chunk
        for offset, line in enumerate(c.text.split("\n")):
            lines.setdefault(c.start_line + offset, line)
    start, end = min(lines), max(lines)
    best = max(run, key=lambda h: h.score)
    symbols = [h.chunk.symbol for h in run if h.chunk.symbol]
    return Source(
        repo=best.chunk.repo,
        path=best.chunk.path,
        language=best.chunk.language,
        start_line=start,
        end_line=end,
        symbol=", ".join(dict.fromkeys(symbols)),
        text="\n".join(lines.get(n, "") for n in range(start, end + 1)),
        score=best.score,
    )


def _truncate(block: Source, budget: int) -> Source:
    """Keep the head of a block that alone exceeds the budget; lines stay exact."""
    kept: list[str] = []
    used = 0
    for line in block.text.split("\n"):
        used += count_tokens(line) + 1
        if used > budget and kept:
            break
        kept.append(line)
    return Source(
        block.repo,
        block.path,
        block.language,
        block.start_line,
        block.start_line + len(kept) - 1,
        block.symbol,
        "\n".join(kept),
        block.score,
    )
