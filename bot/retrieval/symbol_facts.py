"""Exact findings for symbol questions, from the symbol table built at ingest.

For "where is X defined" the finder looks the name up (a dotted name by its
qualified suffix, falling back from `module.func` to `func` at the top of that
module) and, when no definition has the name or it is also bound another way, says
what it is instead (`symbol_names`: a re-export or alias followed to its definition,
a member made at run time in a loop over names, a method of a receiver whose type
the code states, or the candidates and why it cannot tell);
for "who calls X" / "where is X used" it lists the references by name; for an
overview it builds the repository map. It also picks the chunks that hold
what it found (the definition's lines, the call sites, the central symbols),
which the retriever puts ahead of the similarity ranking so the answer can
quote them. Nothing here scans files: every step is an indexed lookup.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from bot.errors import BotError
from bot.index.base import Index
from bot.models import Hit
from bot.retrieval.intent import file_kind
from bot.retrieval.repomap import RepoMap, RepoMapper
from bot.retrieval.symbol_calls import Attribution, CallJudge
from bot.retrieval.symbol_chunks import Line, Span, SymbolChunks, span
from bot.retrieval.symbol_inherited import Inherited, inherited
from bot.retrieval.symbol_language import language_of
from bot.retrieval.symbol_names import Meaning, NameFinder, NameLookup
from bot.retrieval.symbol_questions import SymbolQuestion, detect_symbol_question
from bot.store.symbols.lookup import named
from bot.symbols.model import RankedSymbol, SymbolAlias, SymbolDef, SymbolRef

log = logging.getLogger(__name__)

MAX_DEFINITIONS = 10  # definitions of one name kept (and listed)
DEFINITION_FETCH = 50  # definitions of one name read, to keep the best MAX_DEFINITIONS
_ASIDE_DIRS = frozenset({"bench", "benches", "benchmark", "benchmarks"})
DEFINITION_SOURCES = 3  # definitions whose code leads the context
DEFINITION_CHUNKS = 3  # head chunks of one long definition
SITE_FETCH = 200  # references read per question; beyond that only their number is
OVERVIEW_SOURCES = 5  # central definitions quoted for an overview
_RECEIVERS = frozenset({"self", "this", "cls", "super", "me", "it"})
_KIND_FAMILIES = (
    frozenset({"function", "method", "constructor", "decorator"}),
    frozenset({"class", "struct", "interface", "trait", "type", "enum", "module"}),
    frozenset({"constant", "variable", "field", "property", "attribute"}),
)


class SymbolLookup(NameLookup, Protocol):
    """The part of the symbol store (`bot.store.symbols.table.SymbolStore`) these answers use:
    `NameLookup`'s definitions, aliases, references and file facts, and these."""

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
    code: dict[Line, str] = field(default_factory=dict)  # each quoted site's line of code
    maps: tuple[RepoMap, ...] = ()
    hits: tuple[Hit, ...] = ()  # the chunks behind the findings, to rank first
    inherited: Inherited | None = None  # the class asked about gets the member from a base
    how: dict[Line, str] = field(default_factory=dict)  # sites not resolved exactly: why kept
    reaches: dict[Line, SymbolDef] = field(default_factory=dict)  # sites resolved: to which
    left_out: tuple[Attribution, ...] = ()  # sites that reach another definition of the name
    # What the name is when no definition of that name says it all (`symbol_names`): then
    # `definitions` holds only what it certainly reaches, never an unsure candidate.
    meaning: Meaning | None = None

    @property
    def answerable(self) -> bool:
        """Whether the table answers the question by itself."""
        if self.question.kind == "overview":
            return bool(self.maps)
        if self.question.kind == "definition":
            return bool(self.definitions) or self.meaning is not None
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
        hits = SymbolChunks(self._index).definitions(central[:OVERVIEW_SOURCES], chunks=1)
        return SymbolFacts(q, maps=tuple(maps), hits=tuple(hits))

    # -- definitions and references ----------------------------------------------------------

    def _lookup(
        self, table: SymbolLookup, q: SymbolQuestion, repos: frozenset[str] | None
    ) -> SymbolFacts | None:
        defs, via, case_only = _definitions(table, q, repos)
        finder = NameFinder(table, repos)
        meaning = None
        if via is None or not defs:
            defs, meaning = finder.explain(q, defs)
        if meaning is None:
            defs = finder.exported_first(defs, q.name)
        if not defs and meaning is None:  # a namesake in another case (`reply` for `Reply`)
            defs = case_only
        if not defs and meaning is None:
            defs, meaning = finder.through_namespace(q)
        if not defs and meaning is None:
            defs, meaning = finder.through_receiver(q)
        chunks = SymbolChunks(self._index)
        if q.kind == "definition":
            if not defs and meaning is None:
                return SymbolFacts(q, inherited=via) if _says_missing(q) else None
            count = table.reference_count(defs[0].name, repos=repos) if defs else 0
            hits = [*_meaning_hits(chunks, meaning)]
            hits += chunks.definitions(defs[:DEFINITION_SOURCES], chunks=DEFINITION_CHUNKS)
            return SymbolFacts(
                q,
                tuple(defs),
                len(defs),
                references=count,
                hits=tuple(hits),
                inherited=via,
                meaning=meaning,
            )
        name = defs[0].name if defs else q.last
        calls = q.kind == "callers"
        refs = table.references(name, repos=repos, calls_only=calls, limit=SITE_FETCH)
        judged = CallJudge(table, defs).judge_all(refs)
        left_out = tuple(_ordered_by_site([a for a in judged if a.verdict == "no"]))
        how = {_line(a.site): a.how for a in judged if a.verdict == "maybe"}
        reaches = {_line(a.site): a.reaches for a in judged if a.reaches is not None}
        sites = _ordered(_near([a.site for a in judged if a.verdict != "no"], q.where))
        total = len(sites)
        if len(refs) >= SITE_FETCH:  # only the first part was read
            counted = table.reference_count(name, repos=repos, calls_only=calls)
            total = max(total, counted - len(left_out))
        # Without a definition, sites of `pkg.get` would be every `.get`: list them only for a
        # plain name that is clearly code, or one the question says is called.
        listable = "." not in q.name and (q.explicit or q.kind == "callers")
        if not defs and not (sites and listable):
            return SymbolFacts(q) if _says_missing(q) else None
        namesakes = len(defs)
        if defs and "." in q.name:
            namesakes = len(table.definitions(name, repos=repos, limit=MAX_DEFINITIONS))
        site_hits, code = chunks.sites(sites)
        def_hits = chunks.definitions(defs[:1], chunks=1)
        if meaning is not None and meaning.kind != "alias":
            meaning = None  # a caller's answer is about the definitions it reaches
        return SymbolFacts(
            q,
            tuple(defs),
            namesakes,
            tuple(sites),
            total_sites=total,
            code=code,
            hits=(*site_hits, *def_hits),
            inherited=via,
            how=how,
            reaches=reaches,
            left_out=left_out,
            meaning=meaning,
        )


def _says_missing(q: SymbolQuestion) -> bool:
    """Whether a name the table does not know is worth saying so (else search answers)."""
    return q.explicit and not q.lenient


def _meaning_hits(chunks: SymbolChunks, meaning: Meaning | None) -> list[Hit]:
    """The chunks holding what a meaning cites: its aliases' lines, the list of a loop's
    names, the function an assignment calls, the candidates of an unsure answer."""
    if meaning is None:
        return []
    places = [_alias_place(a) for a in meaning.aliases]
    if meaning.listed is not None:
        listed = meaning.listed
        places.append(SymbolDef(listed.repo, listed.path, "", "", "", listed.line, listed.line))
    if meaning.made_by is not None:
        places.append(meaning.made_by)
    places += meaning.candidates[:DEFINITION_SOURCES]
    return chunks.definitions(places, chunks=1)


def _alias_place(a: SymbolAlias) -> SymbolDef:
    return SymbolDef(a.repo, a.path, a.name, a.name, a.kind, a.start_line, a.end_line)


def exact_first(facts: SymbolFacts | None, hits: Sequence[Hit]) -> list[Hit]:
    """The findings' chunks ahead of the similarity ranking (scored above its best), then the
    ranking without them."""
    if facts is None or not facts.hits:
        return list(hits)
    top = max((h.score for h in hits), default=1.0) or 1.0
    exact: dict[Span, Hit] = {}
    for h in facts.hits:
        exact.setdefault(span(h.chunk), h)
    n = len(exact)
    ranked = [Hit(h.chunk, top * (2.0 + (n - i) / n)) for i, h in enumerate(exact.values())]
    return ranked + [h for h in hits if span(h.chunk) not in exact]


def _definitions(
    table: SymbolLookup, q: SymbolQuestion, repos: frozenset[str] | None
) -> tuple[list[SymbolDef], Inherited | None, list[SymbolDef]]:
    """The definitions the question names; a member a class only inherits is found through
    its bases (with how, also when no base defines it). Definitions that match only ignoring
    case are given apart (third): what else the name may be is looked at first (`bottle.get`
    is the module's `get` before it is the method `Bottle.get`)."""
    candidates = _candidates(q.name)
    case_only: list[SymbolDef] = []
    for name, module in candidates:
        found = table.definitions(name, repos=repos, limit=DEFINITION_FETCH)
        if module:  # `billing.charge` is a `charge` at the top of a billing module, or none
            found = [d for d in found if "." not in d.symbol and _in_module(table, d, module)]
        exact = [d for d in found if named(d, name, folded=False)]
        if exact and all(file_kind(d.path) != "code" for d in exact):
            exact = [*_class_named_like(table, name, repos), *exact]
        if exact:
            return _preferred(exact, q.symbol_kind, q.where)[:MAX_DEFINITIONS], None, []
        if found and not case_only:
            case_only = _preferred(found, q.symbol_kind, q.where)[:MAX_DEFINITIONS]
    owned = [name for name, module in candidates if "." in name and not module]
    defs, via = inherited(table, owned[0], repos) if owned else ([], None)
    return defs, via, [] if defs else case_only


def _class_named_like(
    table: SymbolLookup, name: str, repos: frozenset[str] | None
) -> list[SymbolDef]:
    """`reply.send` found only in tests (a stub set on a variable): the code's `Reply.send`,
    the class a variable of that name is usually an instance of."""
    owner, _, member = name.rpartition(".")
    if not owner or "." in owner or not owner[:1].islower():
        return []
    found = table.definitions(f"{owner[:1].upper()}{owner[1:]}.{member}", repos=repos)
    return [d for d in found if file_kind(d.path) == "code"]


def _ordered_by_site(found: list[Attribution]) -> list[Attribution]:
    return sorted(found, key=lambda a: (file_kind(a.site.path) != "code", *_line(a.site)))


def _line(site: SymbolRef) -> Line:
    return site.repo, site.path, site.line


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
    """Softly narrow to the kind and place the question named, the very kind first ("the
    safeParse method": methods before functions); code before benchmarks, tests and docs."""
    if kind:
        family = next((f for f in _KIND_FAMILIES if kind in f), frozenset({kind}))
        defs = [d for d in defs if d.kind in family] or defs
    if where:
        defs = [d for d in defs if _at(d.repo, d.path, where)] or defs
    return sorted(
        defs,
        key=lambda d: (file_kind(d.path) != "code", _aside(d.path), bool(kind) and d.kind != kind),
    )


def _aside(path: str) -> bool:
    """Code beside the project's own: benchmarks (`packages/bench/`, `benches/`)."""
    return any(part in _ASIDE_DIRS for part in path.lower().split("/")[:-1])


def _in_module(table: SymbolLookup, d: SymbolDef, module: str) -> bool:
    """Whether `module.name` names `d`: a file or directory called `module`, or (Go) the
    package its file declares (`cli.Exit` for `package cli` at the repository's root)."""
    if _at("", d.path, module):
        return True
    if language_of(d.path) != "go":
        return False
    facts = table.file_facts(d.repo, [d.path]).get(d.path)
    return facts is not None and facts.links.package == module


def _near(refs: list[SymbolRef], where: str) -> list[SymbolRef]:
    return ([r for r in refs if _at(r.repo, r.path, where)] or refs) if where else refs


def _at(repo: str, path: str, where: str) -> bool:
    """Whether `path` in `repo` lies at the place a question named (file, directory, repo;
    "" for `repo`: a file or directory only)."""
    where = where.lower().strip("/")
    lowered = path.lower()
    if where in (repo.lower() if repo else "", lowered) or lowered.endswith("/" + where):
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
