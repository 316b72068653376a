"""From a question to ranked chunks and a compact, cited context.

Stages: lexical search over all fields (a pasted report's boilerplate left out, see
`boilerplate`), an exact pass over symbols and paths for the identifiers in the
question, the chunks holding what it names verbatim (`evidence`), dense search when an
embedder is set; reciprocal-rank fusion; each chunk's score blended with its file's
whole-file relevance, where files named by the question's words count as named
(`blend`); neighbouring chunks of one file merged; the best blocks fitted into a token
budget.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from bot.errors import BotError
from bot.index.base import HybridIndex, Index
from bot.llm.embeddings import Embedder
from bot.models import FileHit, Hit, Usage, line_label
from bot.retrieval import evidence
from bot.retrieval.blend import blend, fuse, fuse_files
from bot.retrieval.intent import intent_of
from bot.retrieval.query import QueryAnalysis, analyze
from bot.retrieval.relevance import Coverage, RelevanceJudge
from bot.retrieval.symbol_facts import SymbolFacts, SymbolFinder, SymbolLookup, exact_first
from bot.text.counting import count_tokens
from bot.text.tokens import query_terms

log = logging.getLogger(__name__)

LEXICAL_K = 150
EXACT_K = 60
DENSE_K = 100
FILE_K = 100
EXACT_WEIGHT = 1.5  # identifiers and paths in a question outrank plain words
VERBATIM_WEIGHT = 1.5  # chunks holding a named identifier verbatim, as a ranked list
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
        if self.language == COMMIT:  # a commit as a source (`bot.answer.history_answer`)
            return self.path
        return line_label(self.path, self.start_line, self.end_line)


COMMIT = "commit"  # the language of a Source that is a commit: its path is "commit <sha8>"


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
        terms = list(dict.fromkeys((*q.terms, *exact_terms, *q.joined)))
        if not terms and not q.text.strip():
            return [], Usage(), None
        expanding = self._expand(q.text)
        ranked_lists, tokens = self._question_lists(q, terms, exact_terms, repos)
        verbatim = evidence.verbatim(self._index, q.verbatim if q.focus else (), repos)
        if verbatim:
            ranked_lists.append((VERBATIM_WEIGHT * q.focus, verbatim.hits))
        hypothetical, usage, hyde_seconds = "", Usage(), None
        if expanding is not None:
            (hypothetical, usage), hyde_seconds = expanding.result()
        if hypothetical:
            hypo_lists, hypo_tokens = self._hypothetical_lists(hypothetical, repos)
            ranked_lists += hypo_lists
            tokens += hypo_tokens
        usage = usage + Usage(embedding_tokens=tokens)
        subject = query_terms(q.subject) if q.subject else []
        if subject:  # the subject line ranks again on its own, for chunks and whole files
            ranked_lists.append(
                (SUBJECT_WEIGHT, self._index.lexical(subject, repos=repos, k=LEXICAL_K))
            )
        ranked = blend(
            fuse(ranked_lists),
            self._files(terms, subject, repos),
            q,
            intent_of(q.subject or q.text),  # a report asks for docs or tests in its title
            file_weight=self._file_weight,
            verbatim=verbatim.share,
            # A report's words say what went wrong, not where: modules are named by questions.
            modules={} if q.is_report else evidence.named_modules(self._index, q.concepts, repos),
        )
        return ranked, usage, hyde_seconds

    def _question_lists(
        self,
        q: QueryAnalysis,
        terms: list[str],
        exact_terms: tuple[str, ...],
        repos: frozenset[str] | None,
    ) -> tuple[list[tuple[float, list[Hit]]], int]:
        """The question's own rankings (lexical or hybrid, exact, dense) and embedding tokens."""
        ranked_lists: list[tuple[float, list[Hit]]] = []
        tokens = 0
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
        return ranked_lists, tokens

    def _hypothetical_lists(
        self, hypothetical: str, repos: frozenset[str] | None
    ) -> tuple[list[tuple[float, list[Hit]]], int]:
        """Rankings for HyDE's hypothetical snippet, and its embedding tokens."""
        ranked_lists: list[tuple[float, list[Hit]]] = []
        hypo_terms = query_terms(hypothetical)[:HYDE_TERMS]
        if hypo_terms:
            hypo_hits = self._index.lexical(hypo_terms, repos=repos, k=LEXICAL_K)
            ranked_lists.append((HYDE_WEIGHT, hypo_hits))
        hypo_dense, hypo_tokens = self._dense(hypothetical, repos)
        if hypo_dense:
            ranked_lists.append((HYDE_WEIGHT, hypo_dense))
        return ranked_lists, hypo_tokens

    def _files(
        self, terms: list[str], subject: list[str], repos: frozenset[str] | None
    ) -> list[FileHit]:
        """Whole-file relevance: the question's terms, fused with its subject line's."""
        files = self._index.files_lexical(terms, repos=repos, k=FILE_K) if terms else []
        if not subject:
            return files
        by_subject = self._index.files_lexical(subject, repos=repos, k=FILE_K)
        return fuse_files([(1.0, files), (1.0, by_subject)])

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
