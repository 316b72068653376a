"""How-it-works paths: from the definition a question is about, along the calls that matter.

"How does chi pick the handler for a request path?" is answered best by the code's
own route through the question: `Mux.routeHTTP → node.FindRoute (tree.go:L383) →
node.findRoute`. The finder

1. takes the entry point the question names (`Router.match`), or else weighs the
   definitions behind the best-ranked chunks (implementation code only) by how much
   of the question they hold, themselves and along their calls;
2. follows, from each step, the call whose definition holds most of the question's
   weight (`bot.retrieval.relevance`), as long as it holds enough (`FLOOR`); calls are
   read from the body and resolved through the symbol table (`howcalls`);
3. returns the steps, each with its definition's lines, to be shown and cited.

Nothing is guessed: a call whose target is unclear ends the path there.
"""

from __future__ import annotations

import re
from collections.abc import Sequence, Set
from dataclasses import dataclass, replace

from bot.errors import BotError
from bot.index.base import Index
from bot.models import Chunk, Hit
from bot.retrieval.howcalls import (
    CALLABLE_KINDS,
    CallSite,
    calls_in,
    go_receiver,
    implementation,
    in_test_module,
    resolve,
)
from bot.retrieval.preamble import without_preamble
from bot.retrieval.relevance import Coverage
from bot.retrieval.retriever import Retrieval, Source
from bot.retrieval.symbol_chunks import SymbolChunks
from bot.retrieval.symbol_facts import SymbolLookup
from bot.symbols.model import SymbolDef
from bot.text.tokens import code_tokens, path_tokens, tokens_in

MAX_STEPS = 4  # the entry and up to three calls
CANDIDATE_HITS = 12  # best-ranked chunks whose definitions may be the entry point
FLOOR = 0.2  # a call is followed when its definition holds this share of the question
CALLEE_WEIGHT = 0.5  # how much a candidate entry's path adds to its own relevance
NAMED_BONUS = 1.0  # an entry the question names outranks any the ranking suggests
MAX_CALLS = 40  # distinct calls of one body looked up
MAX_BODY_LINES = 400  # a longer definition is read only this far for its calls
WRAPPER_LINES = 2  # a head and one statement holding its one call: it delegates
DOC_LINES = 8  # comment lines right above a definition that are read with it
_DOC_STARTS = ("//", "/*", "*", "#", "--", "///", "@")

# "how does X work", "what happens when", "walk me through", "explain how": the question
# asks for a mechanism, not a place. Lead words ("hey", "I'm new here:") are skipped.
_HOW = re.compile(
    r"\b(?:how\s+(?:does|do|did|is|are|was|were|can|could|should|would|will|come)\b"
    r"|what\s+happens\b|what\s+does\s+.+\s+do\b|walk\s+(?:me|us)\s+through\b"
    r"|explain\s+(?:how|what|the)\b|in\s+what\s+order\b|what\s+is\s+the\s+(?:flow|process|logic)\b"
    r"|how\s+\w+\s+(?:works?|gets?|handles?|decides?|picks?|chooses?)\b)",
    re.IGNORECASE,
)


def asks_how(text: str) -> bool:
    """Whether the question (its first line) asks how something works."""
    first = without_preamble(text.strip().split("\n", 1)[0].replace("\u2019", "'"))
    return bool(_HOW.search(first))


@dataclass(frozen=True, slots=True)
class Step:
    definition: SymbolDef
    source: Source  # the definition's own lines, labelled with its one symbol
    relevance: float  # the share of the question's weight it holds
    called_at: int = 0  # the line of the previous step that calls it (0 for the entry)
    named: float = 0.0  # the share its name alone holds (`#retryFromError` for "retry")

    @property
    def weight(self) -> float:
        """How well it carries the question: its lines, and its name once more."""
        return self.relevance + self.named


@dataclass(frozen=True, slots=True)
class HowPath:
    steps: tuple[Step, ...]

    @property
    def entry(self) -> Step:
        return self.steps[0]


class PathFinder:
    """Finds how-paths over one index and its symbol table; one instance serves all questions."""

    def __init__(self, index: Index, symbols: SymbolLookup | None) -> None:
        self._index = index
        self._symbols = symbols

    def find(self, text: str, retrieval: Retrieval, repos: frozenset[str] | None) -> HowPath | None:
        """The path for a how-question; None for another question or when none is clear."""
        if self._symbols is None or retrieval.symbols is not None or not asks_how(text):
            return None
        try:
            walk = _Walk(self._index, self._symbols, retrieval.coverage)
            return walk.best(self._entries(walk, retrieval, repos))
        except BotError:  # the ranking's own sources still answer
            return None

    def definitions_of(self, sources: Sequence[Source]) -> list[SymbolDef]:
        """The symbol table's definitions in the files of `sources` (to label excerpts)."""
        if self._symbols is None:
            return []
        out: list[SymbolDef] = []
        try:
            for repo in dict.fromkeys(s.repo for s in sources):
                paths = list(dict.fromkeys(s.path for s in sources if s.repo == repo))
                for facts in self._symbols.file_facts(repo, paths).values():
                    out.extend(facts.definitions)
        except BotError:  # labels then come from the chunks' own symbols
            return []
        return out

    def _entries(
        self, walk: _Walk, retrieval: Retrieval, repos: frozenset[str] | None
    ) -> list[tuple[SymbolDef, float]]:
        """Candidate entry points with their prior: named ones first, then the ranking's."""
        assert self._symbols is not None
        out: list[tuple[SymbolDef, float]] = []
        said = [c.surface for c in retrieval.coverage.concepts if c.named]  # "Mount", `send`
        for name in list(dict.fromkeys([*retrieval.analysis.symbols, *said]))[:3]:
            last = name.rsplit(".", 1)[-1]
            defs = self._symbols.definitions(last, repos=repos, limit=10)
            found = [d for d in defs if d.kind in CALLABLE_KINDS and _code(d)]
            out.extend(_named(_matching(found, name), _concepts(retrieval, last))[:2])
        for rank, hit in enumerate(_code_hits(retrieval.hits)[:CANDIDATE_HITS]):
            for d in walk.definitions_in(hit.chunk):
                if not in_test_module(d.symbol):
                    out.append((d, 0.2 / (1 + rank)))
        seen: set[tuple[str, str, int]] = set()
        unique = []
        for d, prior in out:
            if (d.repo, d.path, d.start_line) not in seen:
                seen.add((d.repo, d.path, d.start_line))
                unique.append((d, prior))
        return unique


class _Walk:
    """One question's reads: definitions by name, bodies by file, relevance by definition."""

    def __init__(self, index: Index, symbols: SymbolLookup, coverage: Coverage) -> None:
        self._symbols = symbols
        self._chunks = SymbolChunks(index)
        self._coverage = coverage
        self._wanted = frozenset(t for c in coverage.concepts for t in c.tokens)
        self._defs: dict[tuple[str, str], list[SymbolDef]] = {}
        self._steps: dict[SymbolDef, Step | None] = {}

    def best(self, entries: Sequence[tuple[SymbolDef, float]]) -> HowPath | None:
        scored: list[tuple[float, HowPath]] = []
        for d, prior in entries:
            path = self.path_from(d)
            if path is None:
                continue
            callees = sum(s.weight for s in path.steps[1:])
            scored.append((path.entry.relevance + CALLEE_WEIGHT * callees + prior, path))
        if not scored:
            return None
        _, best = max(scored, key=lambda pair: pair[0])
        return best

    def path_from(self, entry: SymbolDef) -> HowPath | None:
        first = self.step(entry, 0)
        if first is None or first.relevance <= 0:
            return None
        steps = [first]
        while len(steps) < MAX_STEPS:
            nxt = self._next(steps[-1], {s.definition for s in steps})
            if nxt is None:
                break
            steps.append(nxt)
        return HowPath(tuple(steps))

    def _next(self, step: Step, visited: set[SymbolDef]) -> Step | None:
        d = step.definition
        head = step.source.text.split("\n", 1)[0]
        receiver_var, _ = go_receiver(head)
        best: Step | None = None
        reached: dict[SymbolDef, Step] = {}
        seen: set[tuple[str, str]] = set()
        for call in calls_in(step.source.text, step.source.start_line, step.source.language):
            if (call.receiver, call.name) in seen or len(seen) >= MAX_CALLS:
                continue
            seen.add((call.receiver, call.name))
            target = self._target(call, d, receiver_var)
            if target is None or target in visited:
                continue
            candidate = self.step(target, call.line)
            if candidate is None:
                continue
            reached.setdefault(target, candidate)
            if candidate.relevance < FLOOR:
                continue
            if best is None or candidate.weight > best.weight:
                best = candidate
        if best is None and len(reached) == 1 and delegates(step.source):
            (only,) = reached.values()
            return only if only.relevance > 0 else None
        return best

    def _target(self, call: CallSite, caller: SymbolDef, receiver_var: str) -> SymbolDef | None:
        key = (caller.repo, call.name)
        if key not in self._defs:
            self._defs[key] = self._symbols.definitions(
                call.name, repos=frozenset({caller.repo}), limit=20
            )
        return resolve(call, caller, receiver_var, self._defs[key])

    def step(self, d: SymbolDef, called_at: int) -> Step | None:
        """`d` as a step: its lines from the index and the share of the question it holds."""
        if d not in self._steps:
            source = self._source(d)
            self._steps[d] = None if source is None else self._step(d, source)
        step = self._steps[d]
        if step is None or step.called_at == called_at:
            return step
        return replace(step, called_at=called_at)

    def _step(self, d: SymbolDef, source: Source) -> Step:
        named = self._coverage.relevance(tokens_in(d.name, self._wanted))
        return Step(d, source, self._relevance(source), named=named)

    def definitions_in(self, chunk: Chunk) -> list[SymbolDef]:
        """The callable definitions a chunk holds (innermost first), as the table has them."""
        facts = self._symbols.file_facts(chunk.repo, [chunk.path]).get(chunk.path)
        if facts is None:
            return []
        inside = [
            d
            for d in facts.definitions
            if d.kind in CALLABLE_KINDS
            and d.start_line <= chunk.end_line
            and d.end_line >= chunk.start_line
        ]
        return sorted(inside, key=lambda d: d.end_line - d.start_line)

    def _source(self, d: SymbolDef) -> Source | None:
        chunks = [
            c
            for c in self._chunks.of(d.repo, d.path).chunks
            if c.start_line <= d.end_line and c.end_line >= d.start_line
        ]
        if not chunks:
            return None
        lines = file_lines(chunks)
        start = max(d.start_line, min(lines))
        while start - 1 in lines and start > d.start_line - DOC_LINES and _doc(lines[start - 1]):
            start -= 1  # the comment above a definition says what it is for: part of it
        end = min(d.end_line, max(lines), start + MAX_BODY_LINES - 1)
        text = "\n".join(lines.get(n, "") for n in range(start, end + 1))
        return Source(d.repo, d.path, chunks[0].language, start, end, d.symbol, text, 0.0)

    def _relevance(self, source: Source) -> float:
        found = self._wanted.intersection(path_tokens(source.path))
        found |= tokens_in(f"{source.symbol}\n{source.text}", self._wanted - found)
        return self._coverage.relevance(found)


def file_lines(chunks: Sequence[Chunk]) -> dict[int, str]:
    """The lines the chunks of one file hold, by the file's own line number."""
    lines: dict[int, str] = {}
    for c in chunks:
        for offset, line in enumerate(c.text.split("\n")):
            lines.setdefault(c.start_line + offset, line)
    return lines


def delegates(source: Source) -> bool:
    """A thin wrapper (`post() { return method_is(POST) }`): a body of a line or two whose
    one call does the work, so the path goes on to it even when the question's words are
    all in the wrapper's doc comment."""
    text = source.text
    code = [line for line in text.split("\n") if line.strip().strip("{}();") and not _doc(line)]
    if len(code) > WRAPPER_LINES:
        return False
    calls = calls_in(text, source.start_line, source.language)
    return len({(c.receiver, c.name) for c in calls}) == 1


def _doc(line: str) -> bool:
    """A line of a doc comment or decorator above a definition (`#[...]`, `@route`)."""
    stripped = line.strip()
    return bool(stripped) and stripped.startswith(_DOC_STARTS)


def _code(d: SymbolDef) -> bool:
    """Implementation code, outside any test module it keeps beside it."""
    return implementation(d.path) and not in_test_module(d.symbol)


def _concepts(retrieval: Retrieval, name: str) -> list[frozenset[str]]:
    """The question's concepts as token sets, less the name itself."""
    own = set(code_tokens(name))
    sets = [frozenset(c.tokens) - own for c in retrieval.coverage.concepts]
    return [t for t in sets if t]


def _named(defs: list[SymbolDef], asked: Sequence[Set[str]]) -> list[tuple[SymbolDef, float]]:
    """Definitions of a name the question says, with their prior: where several share it
    (`Element.text`, `Document.text`), the ones whose class or file the question also
    names ("an element's text()"), or whose file is named after it (`pino.js`'s `pino`
    beside `browser.js`'s), get the whole bonus, the others a quarter."""

    def said(d: SymbolDef) -> int:
        around = f"{d.symbol.rpartition('.')[0]} {d.path}"
        stem = d.path.rsplit("/", 1)[-1].split(".", 1)[0]
        return sum(bool(tokens_in(around, c)) for c in asked) + (stem.lower() == d.name.lower())

    best = max(map(said, defs), default=0)
    ranked = sorted(defs, key=lambda d: -said(d))
    return [(d, NAMED_BONUS if said(d) == best else NAMED_BONUS / 4) for d in ranked]


def _code_hits(hits: Sequence[Hit]) -> list[Hit]:
    return [h for h in hits if implementation(h.chunk.path)]


def _matching(defs: list[SymbolDef], name: str) -> list[SymbolDef]:
    """A dotted name (`Router.match`) keeps the definitions whose symbol ends with it."""
    if "." not in name:
        return defs
    return [d for d in defs if d.symbol == name or d.symbol.endswith("." + name)] or defs
