"""Commits as search results: lexical search over messages, paths and symbols, blended with
the code the question finds, and the commits that changed given lines.

Each repository's recorded commits are read once per recorded head and kept (a few MB
for thousands of commits); a BM25 over subject (counted twice), body, the pull request's
title when known, the touched paths' words and the definitions whose lines a commit
changed ranks them for a question's words. Commits that changed the code the question's
own retrieval found rank higher (`CODE_WEIGHT`): a "why" is usually asked about code.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from bot.store.base import HistoryRecords
from bot.store.history_records import CommitRecord, FileLines, HistoryHead, TagRecord
from bot.text.tokens import code_tokens, path_tokens, query_terms, query_words

K1, B = 1.2, 0.6
COVERAGE = 1.0  # BM25 times (share of the question's words a commit holds) ** COVERAGE
# Words that frame a history question ("when was X added / fixed?"): nearly every commit
# holds one, so they do not count towards a commit's share of the question's words.
FRAMING = frozenset(
    "add added adds fix fixed fixes change changed changes remove removed introduce introduced "
    "since".split()
)
CODE_WEIGHT = 0.3  # a commit that changed the code found for the question, at full strength
NOTES_ONLY = 0.5  # a commit that only edits release notes quotes the change it is not
RECENCY_WEIGHT = 0.05  # ties between equally matching commits go to the newer
LINES_KEPT = 2000  # decoded files' line states kept in memory (a few KB each)


_NOTES = re.compile(
    r"(?:^|/)(?:change(?:s|log|_log)?|history|news|release[-_ ]?notes)(?:\.(?:md|rst|txt|adoc))?$"
    r"|(?:^|/)(?:changelog\.d|changes|newsfragments|changelog|whatsnew)/[^/]+\.(?:md|rst|txt)$",
    re.IGNORECASE,
)


def notes_only(paths: Sequence[str]) -> bool:
    """A commit that touched nothing but changelogs (`CHANGES.md`, `changelog.d/123.md`)."""
    return bool(paths) and all(_NOTES.search(p) for p in paths)


@dataclass(frozen=True, slots=True)
class CommitHit:
    repo: str
    commit: CommitRecord
    score: float


@dataclass(frozen=True, slots=True)
class CodePlace:
    """A place the question's code retrieval found, and how strongly (0..1)."""

    repo: str
    path: str
    start_line: int
    end_line: int
    weight: float


class CommitCorpus:
    """One repository's recorded commits, searchable."""

    def __init__(
        self, head: HistoryHead, commits: Sequence[CommitRecord], titles: Mapping[int, str]
    ):
        self.head = head
        self.commits = list(commits)
        self.by_seq = {c.seq: c for c in commits}
        self.by_sha = {c.sha: c for c in commits}
        self.parents = {c.seq: len(c.parents) for c in commits if c.is_merge}
        self.committed = {c.seq: c.committed for c in commits}
        self._postings: dict[str, list[tuple[int, int]]] = {}
        self._lengths: list[int] = []
        for i, c in enumerate(commits):
            counts = Counter(_document_terms(c, titles.get(c.pr or 0, "")))
            self._lengths.append(sum(counts.values()))
            for term, n in counts.items():
                self._postings.setdefault(term, []).append((i, n))
        self._average = (sum(self._lengths) / len(self._lengths)) if self._lengths else 1.0
        self.notes = {i for i, c in enumerate(commits) if notes_only(c.paths)}

    def coverage(self, words: Sequence[tuple[str, ...]]) -> dict[int, float]:
        """Share of the question's words (any of each word's tokens) each commit holds."""
        if not words:
            return {}
        counts: Counter[int] = Counter()
        for tokens in words:
            docs = {i for t in tokens for i, _ in self._postings.get(t, ())}
            counts.update(docs)
        return {i: n / len(words) for i, n in counts.items()}

    def scores(self, terms: Iterable[str]) -> dict[int, float]:
        """BM25 of each matching commit (by position) for `terms`."""
        total = len(self.commits)
        out: dict[int, float] = {}
        for term in dict.fromkeys(terms):
            postings = self._postings.get(term)
            if not postings:
                continue
            idf = math.log(1 + (total - len(postings) + 0.5) / (len(postings) + 0.5))
            for i, n in postings:
                norm = K1 * (1 - B + B * self._lengths[i] / self._average)
                out[i] = out.get(i, 0.0) + idf * n * (K1 + 1) / (n + norm)
        return out

    def touching(self, lines: FileLines | None, start: int, end: int) -> list[CommitRecord]:
        """The recorded commits that changed lines start..end, newest first."""
        if lines is None:
            return []
        seqs = lines.touching(start, end, self.parents, self.committed)
        return [self.by_seq[s] for s in seqs if s in self.by_seq]


def _document_terms(c: CommitRecord, title: str) -> list[str]:
    terms = code_tokens(c.subject) * 2 + code_tokens(c.body[:1500]) + code_tokens(title) * 2
    for path in c.paths[:40]:
        terms += path_tokens(path)
    for symbol in c.symbols[:30]:
        terms += code_tokens(symbol.rpartition("::")[2])
    return terms


class CommitSearch:
    """Commit search over the history store; corpora cached per recorded head."""

    def __init__(self, store: HistoryRecords) -> None:
        self.store = store
        self._cache: dict[str, CommitCorpus] = {}
        self._lines: dict[tuple[str, str, str], FileLines] = {}  # (repo, head, path), oldest first
        self._absent: set[tuple[str, str, str]] = set()  # files no recorded commit touched
        self._lock = threading.Lock()

    def corpus(self, repo: str) -> CommitCorpus | None:
        head = self.store.head(repo)
        if head is None:
            return None
        with self._lock:
            cached = self._cache.get(repo)
            if cached is not None and cached.head == head:
                return cached
        commits = self.store.commits(repo)
        numbers = {c.pr for c in commits if c.pr}
        titles = {n: p.title for n, p in self.store.pull_requests(repo, numbers).items()}
        corpus = CommitCorpus(head, commits, titles)
        with self._lock:
            self._cache[repo] = corpus
        return corpus

    def tags(self, repo: str) -> list[TagRecord]:
        return self.store.tags(repo)

    def lines(self, repo: str, paths: Iterable[str]) -> dict[str, FileLines]:
        """Files' line states at the recorded head; decoded ones are kept (`LINES_KEPT`)."""
        corpus = self._cache.get(repo)
        head = corpus.head.head if corpus is not None else ""
        wanted = set(paths)
        with self._lock:
            found = {p: f for p in wanted if (f := self._lines.get((repo, head, p))) is not None}
        missing = wanted - set(found) - {p for p in wanted if (repo, head, p) in self._absent}
        if missing:
            read = self.store.file_lines(repo, missing)
            with self._lock:
                for path in missing:
                    if path in read:
                        self._lines[(repo, head, path)] = read[path]
                    else:
                        self._absent.add((repo, head, path))
                while len(self._lines) > LINES_KEPT:
                    self._lines.pop(next(iter(self._lines)))
                if len(self._absent) > LINES_KEPT:
                    self._absent.clear()
            found.update(read)
        return found

    def search(
        self, text: str, repos: Iterable[str], places: Sequence[CodePlace] = (), *, limit: int = 10
    ) -> list[CommitHit]:
        """Commits for a question's words, helped by the code places its retrieval found."""
        terms = query_terms(text)
        words = [w for w in query_words(text) if w[0] not in FRAMING]
        hits: list[CommitHit] = []
        for repo in sorted(set(repos)):
            corpus = self.corpus(repo)
            if corpus is None or not corpus.commits:
                continue
            lexical = corpus.scores(terms)
            covered = corpus.coverage(words)
            lexical = {i: v * covered.get(i, 0.0) ** COVERAGE for i, v in lexical.items()}
            best = max(lexical.values(), default=0.0) or 1.0
            score = {
                i: s / best * (NOTES_ONLY if i in corpus.notes else 1.0) for i, s in lexical.items()
            }
            position = {c.seq: i for i, c in enumerate(corpus.commits)}
            for seq, weight in self._code_weights(corpus, repo, places).items():
                i = position[seq]
                score[i] = score.get(i, 0.0) + CODE_WEIGHT * weight
            newest = len(corpus.commits) or 1
            for i, s in score.items():
                recency = RECENCY_WEIGHT * (i + 1) / newest
                hits.append(CommitHit(repo, corpus.commits[i], s + recency))
        hits.sort(key=lambda h: (h.score, h.commit.committed), reverse=True)
        return hits[:limit]

    def _code_weights(
        self, corpus: CommitCorpus, repo: str, places: Sequence[CodePlace]
    ) -> dict[int, float]:
        """Commit seq -> how much of the found code it changed (the lines' newest commits)."""
        mine = [p for p in places if p.repo == repo]
        if not mine:
            return {}
        lines = self.store.file_lines(repo, {p.path for p in mine})
        weights: dict[int, float] = {}
        for place in mine:
            for rank, commit in enumerate(
                corpus.touching(lines.get(place.path), place.start_line, place.end_line)[:3]
            ):
                gain = place.weight / (1 + rank)
                weights[commit.seq] = max(weights.get(commit.seq, 0.0), gain)
        return weights
