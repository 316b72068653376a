"""What a name asked about is when no definition of that name says it all.

"Where is X defined?" has a plain answer when a definition is named X. Otherwise, or
when X is also bound another way, the symbol table still knows (`Meaning`):

- alias: X is another name re-exported or assigned (`exports.x = other.x`, `export {a
  as x}`, `pub use a::B as X`, `x = a`): the definition it reaches, through every alias
  followed; or another package's name, which is said and not guessed at;
- assigned: X is the result of a call at the top of a module (`get = wrapper('get')`);
- generated: X is made at run time, for each name of a list (`for (const m of
  requestMethods) ky[m] = ...`), with the list and its names when the code has them;
- receiver: `c.URLParam` where the code states what `c` is where it calls the method
  (`rctx := RouteContext(r)`, `func (c *Context)`): that type's method, through its bases;
- namespace: `z.string` where a file exports `z` as a module (`import * as z from
  './external'; export { z }`): that module's `string`, found as its users would;
- unsure: the table cannot tell (`c` is never typed, or has several types): the
  candidates, and why; none of them is presented as the definition.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from bot.retrieval.intent import file_kind
from bot.retrieval.symbol_links import Resolver
from bot.retrieval.symbol_questions import SymbolQuestion
from bot.retrieval.symbol_target import LinkLookup, Target
from bot.retrieval.symbol_types import type_target
from bot.symbols.links import TYPED
from bot.symbols.model import (
    ALIAS,
    ASSIGNED,
    EVERY_NAME,
    GENERATED,
    SymbolAlias,
    SymbolDef,
    SymbolRef,
)

MAX_ALIASES = 8  # aliases of one name followed
MAX_CANDIDATES = 10
MAX_ENTRY_FILES = 8  # package entry files read for a namespace (`z` in `z.string`)
TYPED_SITES = 200  # call sites read for the types of a receiver
_MODULE_OWNERS = ("", "module.exports")

MeaningKind = Literal["alias", "assigned", "generated", "receiver", "unsure"]


class NameLookup(LinkLookup, Protocol):
    """The part of the symbol store these lookups read."""

    def aliases(
        self, name: str, *, repos: frozenset[str] | None, limit: int = 50
    ) -> list[SymbolAlias]: ...

    def references(
        self,
        name: str,
        *,
        repos: frozenset[str] | None,
        calls_only: bool = False,
        limit: int = 50,
    ) -> list[SymbolRef]: ...


@dataclass(frozen=True, slots=True)
class Listed:
    """The list of names a loop goes over, where the code has it."""

    repo: str
    path: str
    line: int
    names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Meaning:
    """How the table answers a name that is not (only) a definition of its own."""

    kind: MeaningKind
    aliases: tuple[SymbolAlias, ...] = ()  # the rows followed (alias), or found
    external: str = ""  # alias: the other package's name it re-exports
    made_by: SymbolDef | None = None  # assigned: the function called
    listed: Listed | None = None  # generated: the names, when the code lists them
    source: str = ""  # generated: where the names come from, as written
    source_module: str = ""  # generated: the module the names are imported from, unlisted
    module: str = ""  # alias: the module it names (a file of the repository)
    receiver: str = ""  # receiver and unsure: the variable asked about (`c`)
    typed_at: tuple[SymbolRef, ...] = ()  # receiver: calls whose receiver type is stated
    types: tuple[SymbolDef, ...] = ()  # receiver: the class(es) the receiver is
    candidates: tuple[SymbolDef, ...] = ()  # unsure: what it may be
    reason: str = ""  # unsure: why the table cannot tell


class NameFinder:
    """Explains one question's name in scope `repos`, a resolver per repository."""

    def __init__(self, table: NameLookup, repos: frozenset[str] | None) -> None:
        self._table = table
        self._repos = repos
        self._resolvers: dict[str, Resolver] = {}

    def resolver(self, repo: str) -> Resolver:
        if repo not in self._resolvers:
            self._resolvers[repo] = Resolver(self._table, repo)
        return self._resolvers[repo]

    def explain(
        self, q: SymbolQuestion, defs: Sequence[SymbolDef]
    ) -> tuple[list[SymbolDef], Meaning | None]:
        """The definitions the question's name means, best first, and how when it is not
        simply their name; `defs`: the definitions found by name."""
        qualifier = q.name.rpartition(".")[0]
        rows = [a for a in self._aliases(q.last) if _fits(a, qualifier)]
        followed = [(a, self._follow(a)) for a in rows if a.kind == ALIAS][:MAX_ALIASES]
        reached = [(a, t) for a, t in followed if t.definition is not None]
        if reached:
            return self._aliased(reached, defs, qualifier)
        if defs:
            return list(defs), None
        outside = [(a, t) for a, t in followed if t.kind == "external"]
        if outside:
            alias, target = outside[0]
            return [], Meaning("alias", aliases=target.via or (alias,), external=target.name)
        modules = [(a, t) for a, t in followed if t.kind == "module"]
        if modules:
            alias, target = modules[0]
            return [], Meaning("alias", aliases=target.via or (alias,), module=target.path)
        values = [t.via for _, t in followed if t.kind == "value" and t.via]
        values += [(a,) for a in rows if a.kind == ASSIGNED]
        if values:  # the aliases followed, the assignment last
            steps = values[0]
            return [], Meaning("assigned", aliases=steps, made_by=self._callee(steps[-1]))
        made = self._generated(q.last, qualifier)
        if made is not None:
            return [], made
        if followed:  # an alias of something the index does not define
            return [], Meaning("alias", aliases=(followed[0][0],))
        return [], None

    def through_namespace(self, q: SymbolQuestion) -> tuple[list[SymbolDef], Meaning | None]:
        """`z.string`: a name of the module the qualifier is bound to where a file of the
        scope exports it (`import * as z from './external'; export { z }`), so what the
        package's users call `z` is read the way the package itself defines it."""
        qualifier, _, name = q.name.rpartition(".")
        if not qualifier or "." in qualifier or not qualifier.isidentifier():
            return [], None
        places = [(a.repo, a.path) for a in self._aliases(qualifier) if a.name == qualifier]
        for repo in sorted(self._repos or ()):
            places += [(repo, path) for path in self._entry_files(repo)]
        for repo, path in dict.fromkeys(places):
            resolver = self.resolver(repo)
            target = resolver.name_in(path, qualifier)
            if target.kind != "module" or not target.path:
                continue
            found = resolver.attribute(target, name)
            if found.kind == "definition" and found.definition is not None:
                return [found.definition], None
        return [], None

    def exported_first(self, defs: Sequence[SymbolDef], name: str) -> list[SymbolDef]:
        """Several files define `name`: the one a package entry file exports (what the
        package's users get: zod's `ZodString` of v4, not the v3 copy it also ships) first."""
        if len({(d.repo, d.path) for d in defs}) < 2 or "." in name:
            return list(defs)
        for repo in sorted({d.repo for d in defs}):
            resolver = self.resolver(repo)
            for path in self._entry_files(repo):
                first = resolver.name_in(path, name).definition
                if first is not None and first in defs:
                    return [first, *(d for d in defs if d != first)]
        return list(defs)

    def _entry_files(self, repo: str) -> list[str]:
        """A repository's package entry files (`index.ts`, `__init__.py`, `lib.rs`), the
        shallowest first: where a package binds the names its users import."""
        found = [
            p
            for p in self._table.paths(repo)
            if p.rpartition("/")[2].partition(".")[0] in _ROOT_FILES and file_kind(p) == "code"
        ]
        return sorted(found, key=lambda p: (p.count("/"), p))[:MAX_ENTRY_FILES]

    def through_receiver(self, q: SymbolQuestion) -> tuple[list[SymbolDef], Meaning | None]:
        """`c.URLParam`, `mx.tree.find`: the method the code's stated types say it is, or the
        candidates and why the table cannot tell."""
        qualifier = q.name.rpartition(".")[0]
        if not qualifier[:1].islower():  # a class (`Router.get`), not a variable
            return [], None
        return self._receiver(q.last, qualifier)

    # -- aliases ---------------------------------------------------------------------------

    def _aliases(self, name: str) -> list[SymbolAlias]:
        return self._table.aliases(name, repos=self._repos, limit=50)

    def _follow(self, a: SymbolAlias) -> Target:
        resolver = self.resolver(a.repo)
        if a.owner in _MODULE_OWNERS and a.name != "default":
            return resolver.name_in(a.path, a.name)  # as an importer of the module sees it
        return _followed(resolver, a)

    def _aliased(
        self,
        reached: list[tuple[SymbolAlias, Target]],
        defs: Sequence[SymbolDef],
        qualifier: str,
    ) -> tuple[list[SymbolDef], Meaning | None]:
        targets = [t.definition for _, t in reached if t.definition is not None]
        ordered = list(dict.fromkeys([*targets, *([] if qualifier else defs)]))
        alias, target = reached[0]
        d = target.definition
        assert d is not None
        if not qualifier and d in defs:
            return ordered, None  # defined under the name asked: its re-exports add nothing
        return ordered, Meaning("alias", aliases=target.via or (alias,))

    def _callee(self, a: SymbolAlias) -> SymbolDef | None:
        callee = a.target.partition("(")[0].strip()
        if not callee or callee.startswith("new "):
            callee = callee.removeprefix("new ").strip()
        target = self.resolver(a.repo).chain(a.path, callee) if callee else _UNKNOWN
        return target.definition

    # -- members made at run time ------------------------------------------------------------

    def _generated(self, name: str, qualifier: str) -> Meaning | None:
        owner = qualifier.rpartition(".")[2]
        rows = [a for a in self._aliases(name) if a.kind == GENERATED and _owned(a, owner)]
        if owner:  # members of names a file cannot list: only when the owner is asked about
            rows += [
                a for a in self._aliases(EVERY_NAME) if a.kind == GENERATED and _owned(a, owner)
            ]
        for row in rows:
            listed, module = self._names(row)
            if listed is not None and name.casefold() not in {n.casefold() for n in listed.names}:
                continue
            return Meaning(
                "generated", aliases=(row,), listed=listed, source=row.target, source_module=module
            )
        return None

    def _names(self, row: SymbolAlias) -> tuple[Listed | None, str]:
        """The names the loop of `row` goes over, and the module it imports them from when
        they are not listed in the index ("" otherwise)."""
        resolver = self.resolver(row.repo)
        facts = resolver.facts(row.path)
        own = facts.links.names_in(row.target) if facts is not None else None
        if own is not None:  # a constant of the same file
            return Listed(row.repo, row.path, own[0], own[1]), ""
        if row.name != EVERY_NAME and facts is not None:  # the loop's literal list
            names = tuple(
                a.name
                for a in facts.aliases
                if a.kind == GENERATED and a.start_line == row.start_line
            )
            return Listed(row.repo, row.path, row.start_line, names), ""
        for b in facts.links.imports if facts is not None else ():
            if b.local != row.target or not b.name:
                continue
            module = resolver.module_file(b.module, row.path)
            there = resolver.facts(module) if module is not None else None
            found = there.links.names_in(b.name) if there is not None and module else None
            if found is not None and module is not None:
                return Listed(row.repo, module, found[0], found[1]), ""
            return None, b.module
        return None, ""

    # -- receivers of a stated type ---------------------------------------------------------

    def _receiver(self, name: str, variable: str) -> tuple[list[SymbolDef], Meaning | None]:
        """`c.URLParam`: the method the code's stated types say `c` calls."""
        sites = self._table.references(name, repos=self._repos, calls_only=True, limit=TYPED_SITES)
        typed = [s for s in sites if s.form & TYPED]
        by_variable: dict[SymbolDef, list[SymbolRef]] = {}
        elsewhere: dict[SymbolDef, list[SymbolRef]] = {}
        types: dict[SymbolDef, SymbolDef] = {}
        for site in typed:
            resolver = self.resolver(site.repo)
            facts = resolver.facts(site.path)
            for via, kind in facts.links.types(site.line, name) if facts is not None else ():
                cls = type_target(resolver, site.path, kind).definition
                member = resolver.member(cls, name)[0] if cls is not None else None
                if member is None or cls is None:
                    continue
                types[member] = cls
                (by_variable if via == variable else elsewhere).setdefault(member, []).append(site)
        methods = [
            d for d in self._table.definitions(name, repos=self._repos, limit=50) if "." in d.symbol
        ]
        if len(by_variable) == 1:
            member, at = next(iter(by_variable.items()))
            return [member], Meaning(
                "receiver", receiver=variable, typed_at=tuple(at[:3]), types=(types[member],)
            )
        if by_variable:
            found = tuple(by_variable)[:MAX_CANDIDATES]
            why = f"`{variable}` has {len(by_variable)} types where the code calls `{name}`"
            return [], Meaning("unsure", receiver=variable, candidates=found, reason=why)
        candidates = _distinct([*elsewhere, *methods])[:MAX_CANDIDATES]
        if not candidates:
            return [], None
        why = f"the indexed code does not state what `{variable}` is"
        typed_at = tuple(s for m in elsewhere for s in elsewhere[m][:1])
        others = tuple(dict.fromkeys(types[m] for m in elsewhere))
        return [], Meaning(
            "unsure",
            receiver=variable,
            candidates=tuple(candidates),
            reason=why,
            typed_at=typed_at,
            types=others,
        )


_UNKNOWN = Target("unknown")


def _followed(resolver: Resolver, a: SymbolAlias) -> Target:
    """An alias set on an object (`ky.stop = stop`): what its target names in its file."""
    if a.module:
        module = resolver.module_file(a.module, a.path)
        found = resolver.name_in(module, a.target) if module is not None else _UNKNOWN
    else:
        found = resolver.chain(a.path, a.target)
    return Target(found.kind, found.definition, found.path, found.name, (a, *found.via))


def _fits(a: SymbolAlias, qualifier: str) -> bool:
    """Whether an alias is what `qualifier.name` asks about: a module's own alias for a plain
    name (or a module qualifier matching its path), else one set on that owner."""
    if not qualifier:
        return a.owner in _MODULE_OWNERS
    owner = qualifier.rpartition(".")[2]
    if _owned(a, owner):
        return True
    return a.owner in _MODULE_OWNERS and _in_module(a.repo, a.path, owner)


def _owned(a: SymbolAlias, owner: str) -> bool:
    if not owner:
        return a.owner in _MODULE_OWNERS
    return a.owner == owner or a.owner.rpartition(".")[2] == owner


def _in_module(repo: str, path: str, module: str) -> bool:
    """Whether `module` names the file at `path`: its name, a directory above it, or (a
    package's root file: `__init__.py`, `index.js`, `lib.rs`) the package itself."""
    stem = path.rpartition("/")[2].partition(".")[0]
    parts = path.split("/")[:-1]
    if module in (stem, *parts):
        return True
    crate = repo.rpartition("/")[2].replace("-", "_")
    if stem in ("lib", "main") and path.endswith(".rs"):  # a crate's root: `any_crate::name`
        return True
    return stem in _ROOT_FILES and module.replace("-", "_") in (crate, *parts)


_ROOT_FILES = frozenset({"__init__", "index", "mod", "lib", "main"})


def _distinct(defs: Iterable[SymbolDef]) -> list[SymbolDef]:
    return list(dict.fromkeys(defs))
