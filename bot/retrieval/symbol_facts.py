"""Exact findings for symbol questions, from the symbol table built at ingest.

For "where is X defined" the finder looks the name up (a dotted name by its
qualified suffix, falling back from `module.func` to `func` in that module);
for "who calls X" / "where is X used" it lists the references by name; for an
overview it builds the repository map. It also picks the chunks that hold
what it found (the definition's lines, the call sites, the central symbols),
which the retriever puts ahead of the similarity ranking so the answer can
quote them. Nothing here scans files: every step is an indexed lookup.
"""

from __future__ import annotations

import logging
from bisect import bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from bot.errors import BotError
from bot.index.base import Index
from bot.models import Chunk, Hit
from bot.retrieval.intent import file_kind
from bot.retrieval.repomap import RepoMap, RepoMapper
from bot.retrieval.symbol_questions import SymbolQuestion, detect_symbol_question
from bot.symbols.model import RankedSymbol, SymbolDef, SymbolRef

log = logging.getLogger(__name__)

MAX_DEFINITIONS = 10  # definitions of one name kept (and listed)
DEFINITION_SOURCES = 3  # definitions whose code leads the context
DEFINITION_CHUNKS = 3  # head chunks of one long definition
SITE_FETCH = 200  # references read per question; beyond that only their number is
SITE_FILES = 4  # files whose chunks are read to quote call sites
SITE_CHUNKS = 6  # call-site chunks put ahead of the ranking
QUOTED_SITES = 40  # sites whose line of code is kept for the answer
COVER_LOOKBACK = 8  # chunks starting before a line that are checked for holding it
OVERVIEW_SOURCES = 5  # central definitions quoted for an overview
_RECEIVERS = frozenset({"self", "this", "cls", "super", "me", "it"})
_KIND_FAMILIES = (
    frozenset({"function", "method", "constructor", "decorator"}),
    frozenset({"class", "struct", "interface", "trait", "type", "enum", "module"}),
    frozenset({"constant", "variable", "field", "property", "attribute"}),
)


_Line = tuple[str, str, int]  # repo, path, line


class SymbolLookup(Protocol):
    """The part of the symbol store (`bot.store.symbols.table.SymbolStore`) these answers use."""

    def definitions(
        self, name: str, *, repos: frozenset[str] | None, limit: int = 20
    ) -> list[SymbolDef]: ...

    def references(
        self,
        name: str,
        *,
        repos: frozenset[str] | None,
        calls_only: bool = False,
        limit: int = 50,
    ) -> list[SymbolRef]: ...

    def reference_count(
        self, name: str, *, repos: frozenset[str] | None, calls_only: bool = False
    ) -> int: ...

    def top_symbols(self, repo: str, *, limit: int = 30) -> list[RankedSymbol]: ...

    def commits(self) -> dict[str, str]: ...


@dataclass(frozen=True, slots=True)
class SymbolFacts:
    """What the symbol table says about a question, exactly."""

    question: SymbolQuestion
    definitions: tuple[SymbolDef, ...] = ()  # best first
    namesakes: int = 0  # definitions sharing the last name segment (references match by name)
    sites: tuple[SymbolRef, ...] = ()  # call sites or references, busiest file first
    total_sites: int = 0  # all the table holds; more than `sites` when only a part was read
    references: int = 0  # for a definition question: how often the name is referred to
    code: dict[_Line, str] = field(default_factory=dict)  # each quoted site's line of code
    maps: tuple[RepoMap, ...] = ()
    hits: tuple[Hit, ...] = ()  # the chunks behind the findings, to rank first

    @property
    def answerable(self) -> bool:
        """Whether the table answers the question by itself."""
        if self.question.kind == "overview":
            return bool(self.maps)
        if self.question.kind == "definition":
            return bool(self.definitions)
        return bool(self.definitions or self.sites)

    @property
    def files(self) -> int:
        return len({(s.repo, s.path) for s in self.sites})


class SymbolFinder:
    def __init__(self, index: Index, symbols: SymbolLookup | None) -> None:
        self._index = index
        self._symbols = symbols
        self.mapper = RepoMapper(index, symbols)

    def find(self, text: str, repos: frozenset[str] | None) -> SymbolFacts | None:
        """Facts for a symbol question in scope `repos`; None for an ordinary question."""
        q = detect_symbol_question(text)
        if q is None:
            return None
        try:
            if q.kind == "overview":
                return self._overview(q, repos)
            if self._symbols is None:
                return None
            current = self._in_step(self._symbols, repos)
            return self._lookup(self._symbols, q, current) if current else None
        except BotError as exc:  # the ordinary ranking still answers
            log.warning("symbol lookup skipped: %s", exc.detail or exc.user_message)
            return None

    def _in_step(self, table: SymbolLookup, repos: frozenset[str] | None) -> frozenset[str]:
        """The repositories of `repos` whose symbol rows match their indexed commit.

        A crash or a failed write between the index and the table leaves them apart until
        the next ingest mends it; meanwhile such a repository is answered by search alone,
        never from rows whose line numbers belong to another commit.
        """
        commits = table.commits()
        states = self._index.repo_states()
        current = {s.name for s in states if commits.get(s.name) == s.commit}
        behind = {s.name for s in states if s.name not in current}
        if repos is not None:
            behind &= repos
        if behind:
            log.warning("symbol table not at the indexed commit of %s", ", ".join(sorted(behind)))
        return frozenset(current if repos is None else current & repos)

    # -- overview ---------------------------------------------------------------------------

    def _overview(self, q: SymbolQuestion, repos: frozenset[str] | None) -> SymbolFacts | None:
        states = [s for s in self._index.repo_states() if repos is None or s.name in repos]
        if q.where:  # "map shop", "how is shop organised": only when shop is a repository here
            states = [s for s in states if s.name.lower() == q.where.lower()]
        if not states:
            return None
        maps = self.mapper.maps(states)
        central: list[SymbolDef] = []
        for rank in range(max((len(m.top) for m in maps), default=0)):  # round-robin by repo
            central.extend(m.top[rank].definition for m in maps if rank < len(m.top))
        hits = _Chunks(self._index).definitions(central[:OVERVIEW_SOURCES], chunks=1)
        return SymbolFacts(q, maps=tuple(maps), hits=tuple(hits))

    # -- definitions and references ----------------------------------------------------------

    def _lookup(
        self, table: SymbolLookup, q: SymbolQuestion, repos: frozenset[str] | None
    ) -> SymbolFacts | None:
        defs = _definitions(table, q, repos)
        chunks = _Chunks(self._index)
        if q.kind == "definition":
            if not defs:
                return SymbolFacts(q) if q.explicit else None
            count = table.reference_count(defs[0].name, repos=repos)
            hits = chunks.definitions(defs[:DEFINITION_SOURCES], chunks=DEFINITION_CHUNKS)
            return SymbolFacts(q, tuple(defs), len(defs), references=count, hits=tuple(hits))
        name = defs[0].name if defs else q.last
        calls = q.kind == "callers"
        refs = table.references(name, repos=repos, calls_only=calls, limit=SITE_FETCH)
        sites = _ordered(_near(refs, q.where))
        total = len(sites)
        if len(refs) >= SITE_FETCH and total == len(refs):  # only the first part was read
            total = max(total, table.reference_count(name, repos=repos, calls_only=calls))
        # Without a definition, sites of `pkg.get` would be every `.get`: list them only for a
        # plain name that is clearly code, or one the question says is called.
        listable = "." not in q.name and (q.explicit or q.kind == "callers")
        if not defs and not (sites and listable):
            return SymbolFacts(q) if q.explicit else None
        namesakes = len(defs)
        if defs and "." in q.name:
            namesakes = len(table.definitions(name, repos=repos, limit=MAX_DEFINITIONS))
        site_hits, code = chunks.sites(sites)
        def_hits = chunks.definitions(defs[:1], chunks=1)
        return SymbolFacts(
            q,
            tuple(defs),
            namesakes,
            tuple(sites),
            total_sites=total,
            code=code,
            hits=(*site_hits, *def_hits),
        )


def exact_first(facts: SymbolFacts | None, hits: Sequence[Hit]) -> list[Hit]:
    """The findings' chunks ahead of the similarity ranking (scored above its best), then the
    ranking without them."""
    if facts is None or not facts.hits:
        return list(hits)
    top = max((h.score for h in hits), default=1.0) or 1.0
    exact: dict[_Span, Hit] = {}
    for h in facts.hits:
        exact.setdefault(_span(h.chunk), h)
    n = len(exact)
    ranked = [Hit(h.chunk, top * (2.0 + (n - i) / n)) for i, h in enumerate(exact.values())]
    return ranked + [h for h in hits if _span(h.chunk) not in exact]


def _definitions(
    table: SymbolLookup, q: SymbolQuestion, repos: frozenset[str] | None
) -> list[SymbolDef]:
    for name, module in _candidates(q.name):
        found = table.definitions(name, repos=repos, limit=MAX_DEFINITIONS)
        if module:  # `billing.charge` is a `charge` in a billing module, or none at all
            found = [d for d in found if _at(d.repo, d.path, module)]
        if found:
            return _preferred(found, q.symbol_kind, q.where)
    return []


def _candidates(name: str) -> list[tuple[str, str]]:
    """Names to try, most specific first, each with a module to prefer.

    `pkg.Session.send` -> `Session.send`; `billing.charge` -> `charge` in a `billing` file
    or directory; `self.send` -> `send`. A capitalised qualifier (a class) is never dropped.
    """
    parts = name.split(".")
    while len(parts) > 1 and parts[0] in _RECEIVERS:
        parts = parts[1:]
    out = [(".".join(parts[i:]), "") for i in range(max(len(parts) - 1, 1))]
    if len(parts) > 1 and parts[-2][:1].islower():
        out.append((parts[-1], parts[-2]))
    return out[-3:] if len(out) > 3 else out


def _preferred(defs: list[SymbolDef], kind: str, where: str) -> list[SymbolDef]:
    """Softly narrow to the kind and place the question named; code before tests and docs."""
    if kind:
        family = next((f for f in _KIND_FAMILIES if kind in f), frozenset({kind}))
        defs = [d for d in defs if d.kind in family] or defs
    if where:
        defs = [d for d in defs if _at(d.repo, d.path, where)] or defs
    return sorted(defs, key=lambda d: file_kind(d.path) != "code")


def _near(refs: list[SymbolRef], where: str) -> list[SymbolRef]:
    return ([r for r in refs if _at(r.repo, r.path, where)] or refs) if where else refs


def _at(repo: str, path: str, where: str) -> bool:
    """Whether `path` in `repo` lies at the place a question named (file, directory, repo)."""
    where = where.lower().strip("/")
    lowered = path.lower()
    if where in (repo.lower(), lowered) or lowered.endswith("/" + where):
        return True
    parts = lowered.split("/")
    return where in parts or where in (p.rsplit(".", 1)[0] for p in parts)


def _ordered(refs: list[SymbolRef]) -> list[SymbolRef]:
    """Grouped by file: code before tests, docs and examples, then the file with most sites
    first; lines ascending within a file."""
    per_file = Counter((r.repo, r.path) for r in refs)
    return sorted(
        refs,
        key=lambda r: (
            file_kind(r.path) != "code",
            -per_file[(r.repo, r.path)],
            r.repo,
            r.path,
            r.line,
        ),
    )


class _Chunks:
    """Reads the chunks holding what was found, each file at most once per question."""

    def __init__(self, index: Index) -> None:
        self._index = index
        self._files: dict[tuple[str, str], _FileChunks] = {}

    def of(self, repo: str, path: str) -> _FileChunks:
        key = (repo, path)
        if key not in self._files:
            self._files[key] = _FileChunks(self._index.chunks_of(repo, path))
        return self._files[key]

    def definitions(self, defs: Sequence[SymbolDef], *, chunks: int) -> list[Hit]:
        hits: list[Hit] = []
        for d in defs:
            covering = [
                c
                for c in self.of(d.repo, d.path).chunks
                if c.start_line <= d.end_line and c.end_line >= d.start_line
            ]
            hits.extend(Hit(c, 0.0) for c in covering[:chunks])
        return hits

    def sites(self, sites: Sequence[SymbolRef]) -> tuple[list[Hit], dict[_Line, str]]:
        """The chunks with most sites (code first), and the line of code of the first sites."""
        files = set(list(dict.fromkeys((s.repo, s.path) for s in sites))[:SITE_FILES])
        counts: Counter[_Span] = Counter()
        found: dict[_Span, Chunk] = {}
        code: dict[_Line, str] = {}
        for s in sites:
            if (s.repo, s.path) not in files:
                continue
            in_file = self.of(s.repo, s.path)
            chunk = in_file.covering(s.line)
            if chunk is None:
                continue
            key = _span(chunk)
            counts[key] += 1
            found[key] = chunk
            if len(code) < QUOTED_SITES:
                code[(s.repo, s.path, s.line)] = in_file.line(chunk, s.line)
        ranked = sorted(found, key=lambda k: (file_kind(k[1]) != "code", -counts[k]))
        return [Hit(found[k], 0.0) for k in ranked[:SITE_CHUNKS]], code


_Span = tuple[str, str, int, int]  # a chunk's place: repo, path, first and last line


def _span(c: Chunk) -> _Span:
    return c.repo, c.path, c.start_line, c.end_line


class _FileChunks:
    """One file's chunks, searchable by line."""

    def __init__(self, chunks: list[Chunk]) -> None:
        self.chunks = chunks  # in line order
        self._starts = [c.start_line for c in chunks]
        self._lines: dict[_Span, list[str]] = {}

    def covering(self, line: int) -> Chunk | None:
        """The smallest chunk holding `line` (chunks rarely overlap: a few are checked)."""
        best: Chunk | None = None
        i = bisect_right(self._starts, line)
        for c in self.chunks[max(0, i - COVER_LOOKBACK) : i]:
            if c.end_line >= line and (best is None or c.end_line - c.start_line < _size(best)):
                best = c
        return best

    def line(self, chunk: Chunk, line: int) -> str:
        key = _span(chunk)
        if key not in self._lines:
            self._lines[key] = chunk.text.split("\n")
        lines = self._lines[key]
        offset = line - chunk.start_line
        return lines[offset] if 0 <= offset < len(lines) else ""


def _size(c: Chunk) -> int:
    return c.end_line - c.start_line
