"""Answers to history questions, and the "last changed" note on every code citation.

A history question (`bot.retrieval.history_intent`) is answered from the recorded commits
beside the code: the question's own code retrieval says which lines it is about, and
  - who / log / "last changed": the commits that changed those lines, newest first;
  - why / when / which: commits ranked by their messages, paths and symbols, helped by
    having changed that code (`CommitSearch.search`);
  - since <tag | date>: the commits after it, summarised by area (`history_summary`).
Without a model the answer lists the commits (date, author, subject, the first line of
the body, the PR, the current lines each still holds); with one, commits are numbered
sources the model cites like code, `[n]` resolving to the commit's permalink. Commit
citations come first, best first; then the code they touched.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import replace

from bot.answer.citations import resolve_citations, to_citation
from bot.answer.history_log import LogResult, log_of
from bot.answer.history_refs import change_ref, commit_citation, date_of
from bot.answer.history_summary import in_area, since_commits, summary_text
from bot.answer.permalinks import Permalinker
from bot.answer.prompts import build_messages
from bot.answer.safety import make_safe
from bot.errors import BotError
from bot.llm.chat import LLM
from bot.models import Answer, ChangeRef, Citation, Question, RepoState, Usage
from bot.retrieval.history_intent import HistoryIntent, history_intent
from bot.retrieval.history_search import CodePlace, CommitCorpus, CommitHit, CommitSearch
from bot.retrieval.history_who import qualified_names
from bot.retrieval.query import analyze
from bot.retrieval.retriever import COMMIT, Retrieval, Retriever, Source
from bot.store.base import SymbolTable
from bot.store.history_records import CommitRecord, FileLines

_NAME = re.compile(r"`([^`\s]+)`|\b([A-Za-z_][A-Za-z0-9_.]*[A-Za-z0-9_])\b")
_WORDS = frozenset(
    "who whom whose when why what which how the a an and or of to in on for by with since "
    "last lately recently first ever did does do was were is are has have had it its this "
    "that these those changed change changes modified touched wrote written edited added "
    "removed introduced knows know owns commit commits pr pull request code function class "
    "method file module part we they i me us".split()
)
LISTED = 8  # commits an extractive answer lists
MODEL_COMMITS = 8  # commits a model sees
MODEL_CODE = 4  # code sources beside them
PLACES = 6  # code places that steer the commit ranking
FACTS = (
    "Sources whose location is `commit <sha>` are commits of the repository's history "
    "(message, author, date, pull request, files changed, the start of the diff). For a "
    "question about why, when or by whom code changed, answer from the commits and cite "
    "them as [n] like code; name the commit's date and author when asked when or who."
)


class HistoryAnswers:
    def __init__(
        self,
        search: CommitSearch,
        retriever: Retriever,
        llm: LLM | None,
        *,
        symbols: SymbolTable | None = None,
        max_tokens: int = 1024,
    ) -> None:
        self.search = search
        self._retriever = retriever
        self._llm = llm
        self._symbols = symbols
        self._max_tokens = max_tokens

    # -- code citations ----------------------------------------------------------------------

    def annotate(
        self, citations: Sequence[Citation], states: dict[str, RepoState]
    ) -> tuple[Citation, ...]:
        """Each code citation with the commit that last changed its lines (when recorded)."""
        out = list(citations)
        for repo in {c.repo for c in citations if c.kind == "code"}:
            corpus = self._current(repo, states)
            if corpus is None:
                continue
            web = states[repo].web_url
            paths = {c.path for c in citations if c.repo == repo and c.kind == "code"}
            lines = self.search.lines(repo, paths)
            for i, c in enumerate(out):
                if c.repo != repo or c.kind != "code":
                    continue
                changed = corpus.touching(lines.get(c.path), c.start_line, c.end_line)
                if changed:
                    out[i] = replace(c, changed=change_ref(changed[0], web))
                elif not corpus.head.complete:
                    out[i] = replace(c, changed=ChangeRef("", date_of(corpus.head.oldest)))
        return tuple(out)

    def _current(self, repo: str, states: dict[str, RepoState]) -> CommitCorpus | None:
        """The repository's commits, when they were recorded at its indexed commit."""
        state = states.get(repo)
        try:
            corpus = self.search.corpus(repo) if state is not None else None
        except BotError:
            return None  # a history store that cannot be read costs the notes, not the answer
        if corpus is None or state is None or corpus.head.head != state.commit:
            return None
        return corpus

    # -- history questions -------------------------------------------------------------------

    def route(self, question: Question, states: dict[str, RepoState]) -> Answer | None:
        """The answer to a history question; None for a code question (or no history)."""
        intent = history_intent(question.text)
        if intent is None:
            return None
        corpora = {r: c for r in states if (c := self._current(r, states)) is not None}
        if not corpora:
            return None
        return self.answer(question, states, intent, corpora)

    def answer(
        self,
        question: Question,
        states: dict[str, RepoState],
        intent: HistoryIntent,
        corpora: dict[str, CommitCorpus],
    ) -> Answer:
        started = time.perf_counter()
        retrieval = self._retriever.retrieve(question.text, frozenset(states))
        places = self._places(question.text, retrieval, frozenset(corpora))
        ranked, summary = self._rank(question.text, intent, corpora, places)
        link = Permalinker(states)
        code = [
            s for s in retrieval.sources if (s.repo, s.path) in {(p.repo, p.path) for p in places}
        ]
        if self._llm is not None and ranked:
            text, citations, usage = self._written(question, ranked, code, states, link, summary)
            mode = "llm"
        else:
            text, citations = self._listed(intent, ranked, places, states, summary)
            usage, mode = Usage(), "extractive"
        citations = self.annotate(citations, states)
        source_text = "\n".join(s.text for s in retrieval.sources)
        cited = {c.repo for c in citations} or set(states)
        return Answer(
            text=make_safe(text, [u for c in citations for u in _urls(c)], source_text),
            citations=citations,
            freshness=tuple(states[r].freshness() for r in sorted(cited) if r in states),
            usage=retrieval.usage + usage,
            timings={**retrieval.timings, "total": time.perf_counter() - started},
            mode=mode,  # type: ignore[arg-type]
        )

    def commit_hits(self, text: str, states: dict[str, RepoState], top_k: int) -> list[CommitHit]:
        """The commits a history question's answer would cite, best first ([] otherwise)."""
        intent = history_intent(text)
        corpora = {r: c for r in states if (c := self._current(r, states)) is not None}
        if intent is None or not corpora:
            return []
        retrieval = self._retriever.retrieve(text, frozenset(states))
        places = self._places(text, retrieval, frozenset(corpora))
        ranked, _ = self._rank(text, intent, corpora, places)
        return list(ranked[:top_k])

    def log(
        self, repo: str, target: str, states: dict[str, RepoState], *, limit: int = 30
    ) -> LogResult:
        """The recorded commits that touched a path or a symbol of `repo`, newest first."""
        corpus = self._current(repo, states)
        if corpus is None:
            raise BotError(_no_history(repo, self._recorded(repo, states)))
        return log_of(
            corpus, repo, target, states[repo].web_url, self._lines_of, self._symbols, limit
        )

    def _recorded(self, repo: str, states: dict[str, RepoState]) -> bool:
        """Whether any history of `repo` is recorded (maybe at an older commit)."""
        try:
            return repo in states and self.search.corpus(repo) is not None
        except BotError:
            return True  # recorded, but unreadable now: indexing again rewrites it

    def _lines_of(self, repo: str, path: str) -> FileLines | None:
        return self.search.lines(repo, [path]).get(path)

    def _rank(
        self,
        text: str,
        intent: HistoryIntent,
        corpora: dict[str, CommitCorpus],
        places: Sequence[CodePlace],
    ) -> tuple[list[CommitHit], str]:
        """The commits that answer, best first, and (for "since") the summary by area."""
        if intent.kind == "since":
            return self._since(text, intent, corpora)
        if intent.kind in ("who", "log") or intent.last:
            touching = self._touching(places, corpora)
            if touching:
                return touching, ""
        return self.search.search(text, corpora, places, limit=LISTED), ""

    def _places(self, text: str, retrieval: Retrieval, repos: frozenset[str]) -> list[CodePlace]:
        """What the question is about: definitions it names, else its best code."""
        places = self._defined(text, repos)
        if places:
            return places[:PLACES]
        for rank, hit in enumerate(retrieval.hits[:PLACES]):  # chunks: narrower than blocks
            c = hit.chunk
            if c.repo in repos:
                places.append(CodePlace(c.repo, c.path, c.start_line, c.end_line, 1 / (1 + rank)))
        return places

    def _defined(self, text: str, repos: frozenset[str]) -> list[CodePlace]:
        """Definitions the question names (`Factory`, `attrs.define`), code before stubs and
        tests, longest first."""
        if self._symbols is None:
            return []
        words = [a or b for a, b in _NAME.findall(text)]
        names = (
            qualified_names(text)
            + list(analyze(text).symbols)
            + [w.strip("()") for w in words if w.lower() not in _WORDS and len(w) > 1]
        )
        found: list[CodePlace] = []
        for name in list(dict.fromkeys(names))[:6]:
            defs = self._symbols.definitions(name, repos=repos, limit=10)
            defs = sorted(defs, key=lambda d: (_secondary(d.path), d.start_line - d.end_line))
            found += [CodePlace(d.repo, d.path, d.start_line, d.end_line, 1.0) for d in defs[:3]]
            if found:
                break
        return found

    def _touching(
        self, places: Sequence[CodePlace], corpora: dict[str, CommitCorpus]
    ) -> list[CommitHit]:
        """Commits that changed the first place's lines, newest first."""
        for place in places[:1]:
            corpus = corpora.get(place.repo)
            if corpus is None:
                continue
            lines = self.search.lines(place.repo, [place.path]).get(place.path)
            found = corpus.touching(lines, place.start_line, place.end_line)
            return [CommitHit(place.repo, c, 1.0) for c in found[:LISTED]]
        return []

    def _since(
        self, text: str, intent: HistoryIntent, corpora: dict[str, CommitCorpus]
    ) -> tuple[list[CommitHit], str]:
        hits: list[CommitHit] = []
        summaries: list[str] = []
        for repo, corpus in sorted(corpora.items()):
            commits, start = since_commits(corpus, self.search.tags(repo), intent)
            commits = in_area(commits, text, repo)
            hits += [CommitHit(repo, c, 1.0) for c in commits]
            summaries.append(summary_text(repo, commits, start))
        return hits, "\n\n".join(s for s in summaries if s)

    def _listed(
        self,
        intent: HistoryIntent,
        ranked: Sequence[CommitHit],
        places: Sequence[CodePlace],
        states: dict[str, RepoState],
        summary: str,
    ) -> tuple[str, tuple[Citation, ...]]:
        if not ranked:
            return "No recorded commit matches this question.", ()
        shown = list(ranked[:LISTED]) if intent.kind != "since" else _notable(ranked)
        citations = [commit_citation(h.repo, h.commit, states[h.repo].web_url) for h in shown]
        lines = [summary] if summary else [_heading(intent, places)]
        newest_first = sorted(shown, key=lambda h: h.commit.committed, reverse=True)
        if intent.kind == "who":
            lines.append(_authors(ranked))
        for hit in newest_first:
            lines.append(_commit_line(hit.commit))
        return "\n".join(lines), tuple(citations)

    def _written(
        self,
        question: Question,
        ranked: Sequence[CommitHit],
        code: Sequence[Source],
        states: dict[str, RepoState],
        link: Permalinker,
        summary: str,
    ) -> tuple[str, tuple[Citation, ...], Usage]:
        assert self._llm is not None
        commits = {f"commit {h.commit.sha[:8]}": h for h in ranked[:MODEL_COMMITS]}
        sources = [_commit_source(h) for h in commits.values()] + list(code[:MODEL_CODE])
        facts = FACTS + (
            f"\n\nSummary by area (codecite's own count):\n{summary}" if summary else ""
        )
        messages = build_messages(question.text, sources, question.conversation, facts=facts)
        completion = self._llm.complete(messages, max_tokens=self._max_tokens)

        def cite(source: Source) -> Citation:
            hit = commits.get(source.path) if source.language == COMMIT else None
            if hit is not None:
                return commit_citation(hit.repo, hit.commit, states[hit.repo].web_url)
            return to_citation(source, link)

        text, citations = resolve_citations(completion.text, sources, link, cite)
        ordered = sorted(citations, key=lambda c: c.kind != "commit")  # commits first, stable
        usage = Usage(completion.prompt_tokens, completion.completion_tokens)
        return text, tuple(ordered), usage


def _no_history(repo: str, recorded: bool) -> str:
    if recorded:
        return f"No history is recorded for {repo} at its indexed commit; index it again."
    return (
        f"No history is recorded for {repo}: it was indexed without it (`--no-history` or "
        "`history = false`); index it with history to ask about its commits."
    )


def _urls(c: Citation) -> list[str]:
    return [c.url] + ([c.changed.url, c.changed.pr_url] if c.changed else [])


def _commit_source(hit: CommitHit) -> Source:
    c = hit.commit
    pr = f"Pull request: #{c.pr}\n" if c.pr else ""
    text = (
        f"commit {c.sha}\nAuthor: {c.author}\nDate: {date_of(c.authored)}\n{pr}\n"
        f"{c.subject}\n\n{c.body[:1200]}\n\nFiles: {', '.join(c.paths[:12])}\n{c.excerpt}"
    )
    return Source(hit.repo, f"commit {c.sha[:8]}", COMMIT, 0, 0, "", text.strip(), hit.score)


def _secondary(path: str) -> bool:
    """Stubs, tests and docs come after the code itself."""
    return path.endswith(".pyi") or "test" in path.lower() or path.startswith("docs/")


def _heading(intent: HistoryIntent, places: Sequence[CodePlace]) -> str:
    where = f" {places[0].path}:L{places[0].start_line}-L{places[0].end_line}" if places else ""
    if intent.kind in ("who", "log") or intent.last:
        return f"Commits that changed{where}, newest first:"
    return "The recorded commits that best match, newest first:"


def _authors(ranked: Sequence[CommitHit]) -> str:
    counts: dict[str, int] = {}
    for hit in ranked:
        counts[hit.commit.author] = counts.get(hit.commit.author, 0) + 1
    people = ", ".join(f"{name} ({n} commit{'s' if n > 1 else ''})" for name, n in counts.items())
    return f"By: {people}"


def _commit_line(c: CommitRecord) -> str:
    pr = f" (#{c.pr})" if c.pr and f"#{c.pr}" not in c.subject else ""
    body = next((line.strip() for line in c.body.splitlines() if line.strip()), "")
    first = f"\n  {body[:200]}" if body else ""
    where = f"\n  files: {', '.join(c.paths[:4])}" if c.paths else ""
    return f"- {c.sha[:8]} {date_of(c.authored)} · {c.author} · {c.subject}{pr}{first}{where}"


def _notable(hits: Sequence[CommitHit]) -> list[CommitHit]:
    """The commits a summary cites: pull requests first, newest first."""
    merged = [h for h in hits if h.commit.pr]
    rest = [h for h in hits if not h.commit.pr]
    return (merged + rest)[:LISTED]
