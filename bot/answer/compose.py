"""From a question and the repositories in its scope to an `Answer`.

Retrieval finds the sources; the text is then exact from the symbol table,
extractive (no model configured), or the model's, with citations resolved
against the retrieved sources only. Every text is made safe before it leaves.
"""

from __future__ import annotations

import time
from dataclasses import replace

from bot.answer.architecture_answer import (
    architecture_facts,
    diagram_attachment,
    entries_first,
)
from bot.answer.citations import resolve_citations
from bot.answer.coverage import absent_words, excerpt_weights, explain_not_answered, not_covered
from bot.answer.extractive import above_floor, extractive_answer
from bot.answer.history_answer import HistoryAnswers
from bot.answer.how_answer import how_answer, how_sources, path_facts
from bot.answer.model_sources import for_model
from bot.answer.permalinks import Permalinker
from bot.answer.progress import Progress, Reporter, pruning, reading, searching, writing
from bot.answer.prompts import NOT_ANSWERED, build_messages
from bot.answer.safety import make_safe
from bot.answer.streaming import AnswerStream, ended
from bot.answer.symbol_answer import facts_block, map_answer, missing_note, symbol_answer
from bot.errors import BotError
from bot.llm.chat import LLM, Completion, Message
from bot.models import (
    Answer,
    AnswerMode,
    Attachment,
    Citation,
    Freshness,
    Question,
    RepoState,
    Usage,
)
from bot.retrieval.architecture import Architecture, ArchitectureReader
from bot.retrieval.history_search import CommitSearch
from bot.retrieval.howpath import HowPath, PathFinder
from bot.retrieval.prune import Pruner
from bot.retrieval.query import analyze
from bot.retrieval.retriever import Retrieval, Retriever, Source
from bot.store.base import HistoryRecords, SymbolTable
from bot.text.counting import count_tokens

FOLLOW_UP_CHARS = 200  # a question shorter than this may lean on the previous one
PREVIOUS_CHARS = 500  # how much of the previous question is searched along


class Composer:
    """Answers questions and draws repository maps over one retriever (and model, if any)."""

    def __init__(
        self,
        retriever: Retriever,
        llm: LLM | None,
        *,
        pruner: Pruner | None = None,
        max_tokens: int,
        paths: PathFinder | None = None,
        architecture: ArchitectureReader | None = None,
        history: HistoryAnswers | None = None,
        symbols: SymbolTable | None = None,
    ) -> None:
        self.retriever = retriever
        self.llm = llm
        self.pruner = pruner
        self.max_tokens = max_tokens
        self.paths = paths  # how-it-works paths through the code (None: not followed)
        self.architecture = architecture  # parts, roles and dependencies for overviews
        self.history = history  # history questions, and "last changed" on code citations
        self._symbols = symbols

    def with_history(self, store: HistoryRecords) -> Composer:
        """This composer, answering history questions from `store` too."""
        self.history = HistoryAnswers(
            CommitSearch(store), self.retriever, self.llm,
            symbols=self._symbols, max_tokens=self.max_tokens,
        )  # fmt: skip
        return self

    def history_answers(self) -> HistoryAnswers:
        """The history side (BotError when this composer has none)."""
        if self.history is None:
            raise BotError("No history is recorded here.")
        return self.history

    def answer(self, question: Question, states: dict[str, RepoState]) -> Answer:
        """`states`: the indexed repositories in the question's scope (all when unscoped)."""
        routed = self.history.route(question, states) if self.history else None
        if routed is not None:
            return routed
        started = time.perf_counter()
        retrieval = self._retrieve(question, states)
        answered_at = time.perf_counter()
        link = Permalinker(states)
        archs = self._architectures(retrieval, states)
        text, citations, mode, usage = self._composed(question, retrieval, link, archs)
        answer = self._finished(
            text, citations, mode, usage, retrieval, states, (started, answered_at)
        )
        return replace(answer, attachments=diagram_attachment(archs))

    def answer_stream(
        self, question: Question, states: dict[str, RepoState], progress: Progress | None = None
    ) -> AnswerStream:
        """As `answer`, the model's text released in safe pieces as it is written.

        Without a model (or with nothing to send it) the whole answer is one piece.
        A stream that fails to start raises ServiceError as `answer` does. `progress`
        hears what is being done ("searching billing…") until the model starts writing.
        """
        routed = self.history.route(question, states) if self.history else None
        if routed is not None:
            return AnswerStream.whole(routed)
        started = time.perf_counter()
        report = Reporter(progress)
        report(searching(analyze(retrieval_text(question))))
        retrieval = self._retrieve(question, states)
        answered_at = time.perf_counter()
        if retrieval.sources:
            report(reading(len(retrieval.sources), retrieval.timings))
        link = Permalinker(states)
        exact = retrieval.symbols is not None and retrieval.symbols.answerable
        archs = self._architectures(retrieval, states)
        attachments = diagram_attachment(archs)
        if self.llm is None or not (retrieval.sources or exact):
            text, citations, mode, usage = self._composed(question, retrieval, link, archs)
            clock = (started, answered_at)
            whole = self._finished(text, citations, mode, usage, retrieval, states, clock)
            return AnswerStream.whole(replace(whole, attachments=attachments))
        sources, messages, usage, staged = self._model_input(question, retrieval, report, archs)
        report(writing(len(sources), {**retrieval.timings, **staged}))
        pieces = self.llm.stream(messages, max_tokens=self.max_tokens)
        source_text = "\n".join(s.text for s in retrieval.sources)

        sentence = not_covered(retrieval)

        def render(raw: str) -> str:
            if sentence and NOT_ANSWERED.startswith(raw.strip()):
                return ""  # may become the not-answered sentence, which is replaced: wait
            text, citations = resolve_citations(explain_not_answered(raw, sentence), sources, link)
            return make_safe(text, [c.url for c in citations], source_text)

        def finish(raw: str, cut_off: bool) -> Answer:
            text, citations = resolve_citations(explain_not_answered(raw, sentence), sources, link)
            completion = getattr(pieces, "completion", None)
            if isinstance(completion, Completion) and not cut_off:
                used = Usage(completion.prompt_tokens, completion.completion_tokens)
            else:  # broken, or a stream that reports nothing: estimated
                used = Usage(0, count_tokens(raw))
            answer = self._finished(
                text, citations, "llm", usage + used, retrieval, states, (started, answered_at)
            )
            timings = {**answer.timings, **staged}
            text = ended(answer.text, cut_off)
            return replace(answer, text=text, timings=timings, attachments=attachments)

        return AnswerStream.of_model(pieces, render, finish)

    def _retrieve(self, question: Question, states: dict[str, RepoState]) -> Retrieval:
        repos = None if question.scope is None else frozenset(states)
        return self.retriever.retrieve(retrieval_text(question), repos)

    def _finished(
        self,
        text: str,
        citations: tuple[Citation, ...],
        mode: AnswerMode,
        usage: Usage,
        retrieval: Retrieval,
        states: dict[str, RepoState],
        clock: tuple[float, float],
    ) -> Answer:
        """The safe answer with its freshness and timings; `clock`: (started, answering from)."""
        started, answered_at = clock
        text = make_safe(
            text,
            [c.url for c in citations],
            "\n".join(s.text for s in retrieval.sources),
        )
        if self.history is not None:
            citations = self.history.annotate(citations, states)
        cited: set[str] = {c.repo for c in citations} or set(states)
        timings = {
            **retrieval.timings,
            "answer": time.perf_counter() - answered_at,
            "total": time.perf_counter() - started,
        }
        return Answer(
            text=text,
            citations=citations,
            freshness=freshness(states, cited),
            usage=usage,
            timings=timings,
            mode=mode,
        )

    def _composed(
        self,
        question: Question,
        retrieval: Retrieval,
        link: Permalinker,
        archs: tuple[Architecture, ...] = (),
    ) -> tuple[str, tuple[Citation, ...], AnswerMode, Usage]:
        """The answer text: exact from the symbol table, extractive, or the model's."""
        usage = retrieval.usage
        facts = retrieval.symbols
        exact = facts is not None and facts.answerable
        if exact and facts is not None and self.llm is None and facts.question.kind == "overview":
            text, citations = map_answer(facts.maps, link, archs)
            return text, citations, "extractive", usage
        if exact and facts is not None and self.llm is None:
            text, citations = symbol_answer(facts, retrieval.sources, link)
            return text, citations, "extractive", usage
        if not retrieval.sources and not exact:
            return _noted(missing_note(facts), NOT_ANSWERED), (), "empty", usage
        if self.llm is None:
            note = missing_note(facts)
            path = self._how(question, retrieval)
            sources = above_floor(retrieval.sources, retrieval.hits)
            if path is not None and not note and not not_covered(retrieval):
                text, citations = how_answer(path, excerpt_weights(retrieval), link, sources)
                return text, citations, "extractive", usage
            text, citations = extractive_answer(
                excerpt_weights(retrieval),
                sources,
                link,
                not_covered="" if note else not_covered(retrieval),
                definitions=self.paths.definitions_of(sources) if self.paths else (),
            )
            return _noted(note, text), citations, "extractive", usage
        sources, messages, usage, _ = self._model_input(question, retrieval, Reporter(None), archs)
        completion = self.llm.complete(messages, max_tokens=self.max_tokens)
        text = explain_not_answered(completion.text, not_covered(retrieval))
        text, citations = resolve_citations(text, sources, link)
        usage = usage + Usage(completion.prompt_tokens, completion.completion_tokens)
        return text, citations, "llm", usage

    def _model_input(
        self,
        question: Question,
        retrieval: Retrieval,
        report: Reporter,
        archs: tuple[Architecture, ...] = (),
    ) -> tuple[list[Source], list[Message], Usage, dict[str, float]]:
        """The (pruned) sources the model sees, its messages, the usage so far, and how
        long pruning took (under "prune", when it ran)."""
        usage, sources = retrieval.usage, retrieval.sources
        timings: dict[str, float] = {}
        if self.pruner is not None and len(sources) > 1:  # one source is kept unjudged
            report(pruning(len(sources)))
            pruned_from = time.perf_counter()
            sources, prune_usage = self.pruner.prune(question.text, sources)
            timings["prune"] = time.perf_counter() - pruned_from
            usage = usage + prune_usage
        path = self._how(question, retrieval)
        if path is not None:
            sources = how_sources(path, sources)
        if archs and self.architecture is not None:
            starts = [s for a in archs for s in self.architecture.entry_sources(a)]
            sources = entries_first(sources, starts)
        sources = for_model(sources, retrieval.hits, excerpt_weights(retrieval))
        facts = facts_block(retrieval.symbols, sources)
        if path is not None:
            facts = "\n".join(f for f in (facts, path_facts(path, sources)) if f)
        if archs:
            facts = "\n\n".join(f for f in (facts, architecture_facts(archs)) if f)
        messages = build_messages(
            question.text,
            sources,
            question.conversation,
            facts=facts,
            absent=absent_words(retrieval),
        )
        return sources, messages, usage, timings

    def _how(self, question: Question, retrieval: Retrieval) -> HowPath | None:
        """The path through the code for a how-question (None for other questions)."""
        if self.paths is None:
            return None
        return self.paths.find(question.text, retrieval, question.scope)

    def _architectures(
        self, retrieval: Retrieval, states: dict[str, RepoState]
    ) -> tuple[Architecture, ...]:
        """The architectures an overview question is about (() for other questions)."""
        facts = retrieval.symbols
        if facts is None or facts.question.kind != "overview":
            return ()
        return self._read_architectures([states[m.repo] for m in facts.maps if m.repo in states])

    def _read_architectures(self, states: list[RepoState]) -> tuple[Architecture, ...]:
        if self.architecture is None:
            return ()
        found = (self.architecture.of(s) for s in sorted(states, key=lambda s: s.name))
        return tuple(a for a in found if a is not None)

    def repo_map(self, states: dict[str, RepoState]) -> Answer:
        """The map of these repositories: parts, tree and key symbols, with a diagram."""
        started = time.perf_counter()
        maps = self.retriever.symbol_finder.mapper.maps(states.values())
        archs = self._read_architectures(list(states.values()))
        text, citations = map_answer(maps, Permalinker(states), archs)
        attachments: tuple[Attachment, ...] = diagram_attachment(archs)
        return Answer(
            text=make_safe(text, [c.url for c in citations]),
            citations=citations,
            freshness=freshness(states, set(states)),
            timings={"total": time.perf_counter() - started},
            mode="extractive",
            attachments=attachments,
        )


def retrieval_text(question: Question) -> str:
    """A follow-up like "and who calls it?" needs the previous question to be searchable."""
    previous = [t.text for t in question.conversation if t.role == "user"]
    if previous and len(question.text) < FOLLOW_UP_CHARS:
        return f"{question.text}\n{previous[-1][:PREVIOUS_CHARS]}"
    return question.text


def _noted(note: str, text: str) -> str:
    return f"{note} {text}" if note else text


def freshness(states: dict[str, RepoState], repos: set[str]) -> tuple[Freshness, ...]:
    return tuple(states[name].freshness() for name in sorted(repos) if name in states)
