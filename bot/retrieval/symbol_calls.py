"""Which call sites of a name can reach the definitions a question is about.

References are recorded by name; each call site also records how it was written
(`bot.symbols.links`). A site is judged against the question's definitions
(`targets`) in its own repository, with that repository's imports and classes
(`symbol_links.Resolver`):

- a bare call `send(...)` reaches what the name means in its file: the file's own
  function or class, else what an import binds (followed through re-exports), else
  a builtin of that name (`open(...)`) when no star import could bind it;
- `self.send(...)` / `cls.send(...)` reaches the first class defining `send` in the
  method resolution order of the class it is written in (`super().send(...)`: after
  that class); it may also reach an override in a subclass; never a top-level function
  (`super().get_command(...)` in a class whose base is not indexed is no call of the
  module's `get_command`);
- `helpers.send(...)` / `werkzeug.utils.send(...)` reaches `send` of what the
  receiver is bound to: a module of this repository, a class, or another package;
- `c.send(...)` on a variable whose type the code states (`c *Client`, `x: Client`,
  `x := NewClient()`, `self.client` after `self.client = Client()`) reaches `send` of
  that type, found through its bases (a method a subclass overrides may be reached too);
  on another package's type it reaches that package;
- `JSON.stringify(...)`, `", ".join(...)`, `strings.Join(...)`: the language or its
  standard library, never the repository;
- `obj.send(...)` on any other object may reach a method named `send`, never a
  top-level function.

Each site gets a verdict: "yes" (resolved to a target), "maybe" (it may be one:
matched by name, a call on an object, a base class that is not indexed) or "no"
(it reaches something else, which is named). Sites recorded without a form
(another language, or rows from before forms were kept) are "maybe, by name".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from bot.retrieval.symbol_language import language_of
from bot.retrieval.symbol_links import Resolver
from bot.retrieval.symbol_target import CLASS_KINDS, LinkLookup, Target
from bot.retrieval.symbol_types import type_target
from bot.symbols.builtins import FUNCTIONS
from bot.symbols.links import BARE, BUILTIN, OTHER, QUALIFIED, SELF, SUPER, TYPED
from bot.symbols.model import FileFacts, SymbolDef, SymbolRef

Verdict = Literal["yes", "maybe", "no"]
_STRENGTH = {"no": 0, "maybe": 1, "yes": 2}
_INTERFACES = frozenset({"interface", "trait"})  # a call through one reaches any implementation

# How a verdict was reached, as the answer says it.
BY_NAME = "by name"
ON_OBJECT = "called on an object"
OVERRIDE = "may reach an override"
UNRESOLVED_BASE = "a base class is not indexed"
UNKNOWN_TYPE = "its receiver's type is not indexed"
THROUGH_INTERFACE = "called through an interface"


@dataclass(frozen=True, slots=True)
class Attribution:
    site: SymbolRef
    verdict: Verdict
    how: str  # "imported", "defined here", "self", "super", "module", "class", or the above
    instead: str = ""  # for "no": what the call reaches (`werkzeug.utils.send_file`)
    reaches: SymbolDef | None = None  # for "yes": the target it reaches
    outside: bool = False  # for "no": it reaches the language or another package


class CallJudge:
    """Judges sites against `targets` (one question's definitions), caching per repository."""

    def __init__(self, table: LinkLookup, targets: Sequence[SymbolDef]) -> None:
        self._table = table
        self.targets = list(targets)
        self._resolvers: dict[str, Resolver] = {}

    def resolver(self, repo: str) -> Resolver:
        if repo not in self._resolvers:
            self._resolvers[repo] = Resolver(self._table, repo)
        return self._resolvers[repo]

    def judge_all(self, sites: Sequence[SymbolRef]) -> list[Attribution]:
        for repo in {s.repo for s in sites if s.form}:
            self.resolver(repo).preload(s.path for s in sites if s.repo == repo)
        return [self.judge(s) for s in sites]

    def judge(self, site: SymbolRef) -> Attribution:
        if not site.call or not site.form:
            return Attribution(site, "maybe", BY_NAME)
        if not self.targets:  # nothing to resolve to: only what is surely another's is left out
            return self._elsewhere(site)
        found: list[Attribution] = []
        if site.form & BARE:
            found.append(self._bare(site))
        if site.form & SELF:
            found.append(self._self(site, after=False))
        if site.form & SUPER:
            found.append(self._self(site, after=True))
        if site.form & QUALIFIED:
            found.append(self._qualified(site))
        if site.form & TYPED:
            found.append(self._typed(site))
        if site.form & BUILTIN:
            found.append(self._builtin(site))
        if site.form & OTHER:
            found.append(self._on_object(site))
        if not found:
            return Attribution(site, "maybe", BY_NAME)
        return max(found, key=lambda a: _STRENGTH[a.verdict])

    # -- the forms ----------------------------------------------------------------------------

    def _bare(self, site: SymbolRef) -> Attribution:
        resolver = self.resolver(site.repo)
        facts = resolver.facts(site.path)
        own = [
            d
            for d in (facts.definitions if facts is not None else ())
            if d.name == site.name and d.kind != "method"
        ]
        mine = [d for d in own if d in self.targets]
        if mine:
            return Attribution(site, "yes", "defined here", reaches=mine[0])
        if any(d.symbol == site.name for d in own):  # the file's own top-level namesake
            return Attribution(site, "no", "defined here", own[0].symbol)
        target = resolver.name_in(site.path, site.name)
        language = language_of(site.path)
        builtin = site.name in FUNCTIONS.get(language, ())
        if target.kind == "unknown" and builtin and not _star_imports(facts):
            prefix = "builtins." if language == "python" else ""
            return Attribution(site, "no", "builtin", f"{prefix}{site.name}", outside=True)
        return self._compare(site, target, "imported")

    def _self(self, site: SymbolRef, *, after: bool) -> Attribution:
        how = "super" if after else "self"
        resolver = self.resolver(site.repo)
        cls = self._enclosing_class(resolver, site)
        if cls is None:
            return Attribution(site, "maybe", BY_NAME)
        ancestry = resolver.ancestry(cls)
        order = ancestry.order[1:] if after else ancestry.order
        for owner in order:
            found = resolver.own_member(owner, site.name)
            if found is None:
                continue
            if found in self.targets:
                return Attribution(site, "yes", how, reaches=found)
            if not after and self._overridden_below(resolver, cls):
                return Attribution(site, "maybe", OVERRIDE)
            return Attribution(site, "no", how, found.symbol)
        if not any(_is_member(self.resolver(t.repo), t) for t in self.targets):
            # `self.get()` / `super().get()` reach a member, never a module's function `get`
            return Attribution(site, "no", how, f"{'super()' if after else 'self'}.{site.name}")
        if ancestry.unresolved:
            return Attribution(site, "maybe", UNRESOLVED_BASE)
        if self._overridden_below(resolver, cls):
            return Attribution(site, "maybe", OVERRIDE)
        return Attribution(site, "maybe", BY_NAME)  # a mixin's call, meant for a subclass

    def _qualified(self, site: SymbolRef) -> Attribution:
        resolver = self.resolver(site.repo)
        facts = resolver.facts(site.path)
        chains = facts.links.receivers(site.line, site.name) if facts is not None else []
        found = []
        for chain in chains:
            receiver = resolver.chain(site.path, chain)
            how = "class" if _is_class(receiver) else "module"
            found.append(self._compare(site, resolver.attribute(receiver, site.name), how))
        if not found:
            return Attribution(site, "maybe", BY_NAME)
        return max(found, key=lambda a: _STRENGTH[a.verdict])

    def _elsewhere(self, site: SymbolRef) -> Attribution:
        """Without a definition to reach, a call is left out only when every way it is
        written reaches the language or another package."""
        outside = []
        if site.form & BUILTIN:
            outside.append(self._builtin(site))
        if site.form & QUALIFIED:
            outside.append(self._qualified(site))
        if site.form & ~(BUILTIN | QUALIFIED) or not all(a.verdict == "no" for a in outside):
            return Attribution(site, "maybe", BY_NAME)
        return outside[0]

    def _typed(self, site: SymbolRef) -> Attribution:
        """A call on a variable (or field) whose type the code states."""
        resolver = self.resolver(site.repo)
        facts = resolver.facts(site.path)
        found = []
        for _via, kind in facts.links.types(site.line, site.name) if facts is not None else []:
            found.append(self._on_type(site, resolver, type_target(resolver, site.path, kind)))
        if not found:
            return Attribution(site, "maybe", BY_NAME)
        return max(found, key=lambda a: _STRENGTH[a.verdict])

    def _on_type(self, site: SymbolRef, resolver: Resolver, typed: Target) -> Attribution:
        if typed.kind == "external":
            return Attribution(site, "no", "typed", f"{typed.name}.{site.name}", outside=True)
        cls = typed.definition
        if typed.kind != "definition" or cls is None:
            return Attribution(site, "maybe", UNKNOWN_TYPE)
        member, _ = resolver.member(cls, site.name)
        if member is not None and member in self.targets:
            return Attribution(site, "yes", "typed", reaches=member)
        if self._overridden_below(resolver, cls) or cls.kind in _INTERFACES:
            return Attribution(site, "maybe", OVERRIDE if member else THROUGH_INTERFACE)
        if member is not None:
            return Attribution(site, "no", "typed", member.symbol)
        if resolver.ancestry(cls).unresolved:
            return Attribution(site, "maybe", UNRESOLVED_BASE)
        return Attribution(site, "no", "typed", f"{cls.symbol}.{site.name}")

    def _builtin(self, site: SymbolRef) -> Attribution:
        """`JSON.stringify(...)`, `", ".join(...)`: the language's own."""
        resolver = self.resolver(site.repo)
        facts = resolver.facts(site.path)
        chains = facts.links.receivers(site.line, site.name) if facts is not None else []
        owner = chains[0] if chains else "a builtin"
        return Attribution(site, "no", "builtin", _written(site, owner), outside=True)

    def _on_object(self, site: SymbolRef) -> Attribution:
        if any(_is_member(self.resolver(t.repo), t) for t in self.targets):
            return Attribution(site, "maybe", ON_OBJECT)
        return Attribution(site, "no", ON_OBJECT, f".{site.name}()")

    # -- shared -------------------------------------------------------------------------------

    def _compare(self, site: SymbolRef, target: Target, how: str) -> Attribution:
        if target.kind == "definition" and target.definition is not None:
            if target.definition in self.targets:
                return Attribution(site, "yes", how, reaches=target.definition)
            return Attribution(site, "no", how, target.definition.symbol)
        if target.kind == "external":
            return Attribution(site, "no", how, _written(site, target.name), outside=True)
        return Attribution(site, "maybe", BY_NAME)

    @staticmethod
    def _enclosing_class(resolver: Resolver, site: SymbolRef) -> SymbolDef | None:
        facts = resolver.facts(site.path)
        if facts is None:
            return None
        classes = {d.symbol: d for d in facts.definitions if d.kind in (*CLASS_KINDS, "impl")}
        symbol = site.caller
        while symbol:
            if symbol in classes and symbol != site.caller:
                return resolver.class_of(classes[symbol])
            symbol = symbol.rpartition(".")[0]
        return None

    def _overridden_below(self, resolver: Resolver, cls: SymbolDef) -> bool:
        """Whether a target is a method of a subclass of `cls` (reached through `self`)."""
        for t in self.targets:
            owner = _owner(resolver, t) if t.repo == cls.repo else None
            if owner is not None and owner != cls and cls in resolver.ancestry(owner).order:
                return True
        return False


def _star_imports(facts: FileFacts | None) -> bool:
    return facts is not None and any(b.local == "*" for b in facts.links.imports)


def _owner(resolver: Resolver, d: SymbolDef) -> SymbolDef | None:
    """The class `d` is a member of, if any."""
    parent = d.symbol.rpartition(".")[0]
    facts = resolver.facts(d.path)
    if not parent or facts is None:
        return None
    return next(
        (c for c in facts.definitions if c.symbol == parent and c.kind in CLASS_KINDS), None
    )


def _is_member(resolver: Resolver, d: SymbolDef) -> bool:
    return d.kind == "method" or _owner(resolver, d) is not None


def _is_class(target: Target) -> bool:
    d = target.definition
    return d is not None and d.kind in CLASS_KINDS


def _written(site: SymbolRef, dotted: str) -> str:
    """A receiver and the called name as the site's language writes them (`std::mem::swap`)."""
    full = (
        dotted
        if dotted.endswith(f".{site.name}") or dotted == site.name
        else f"{dotted}.{site.name}"
    )
    return full.replace(".", "::") if language_of(site.path) in ("rust", "cpp") else full


def kept(attributions: Sequence[Attribution]) -> list[Attribution]:
    return [a for a in attributions if a.verdict != "no"]
