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
  that class); it may also reach an override in a subclass;
- `helpers.send(...)` / `werkzeug.utils.send(...)` reaches `send` of what the
  receiver is bound to: a module of this repository, a class, or another package;
- `obj.send(...)` on any other object may reach a method named `send`, never a
  top-level function.

Each site gets a verdict: "yes" (resolved to a target), "maybe" (it may be one:
matched by name, a call on an object, a base class that is not indexed) or "no"
(it reaches something else, which is named). Sites recorded without a form
(another language, or rows from before forms were kept) are "maybe, by name".
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from bot.retrieval.symbol_links import CLASS_KINDS, LinkLookup, Resolver, Target
from bot.symbols.links import BARE, OTHER, QUALIFIED, SELF, SUPER
from bot.symbols.model import FileFacts, SymbolDef, SymbolRef

Verdict = Literal["yes", "maybe", "no"]
_STRENGTH = {"no": 0, "maybe": 1, "yes": 2}
_BUILTINS = frozenset(dir(builtins))

# How a verdict was reached, as the answer says it.
BY_NAME = "by name"
ON_OBJECT = "called on an object"
OVERRIDE = "may reach an override"
UNRESOLVED_BASE = "a base class is not indexed"


@dataclass(frozen=True, slots=True)
class Attribution:
    site: SymbolRef
    verdict: Verdict
    how: str  # "imported", "defined here", "self", "super", "module", "class", or the above
    instead: str = ""  # for "no": what the call reaches (`werkzeug.utils.send_file`)
    reaches: SymbolDef | None = None  # for "yes": the target it reaches


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
        if not site.call or not site.form or not self.targets:
            return Attribution(site, "maybe", BY_NAME)
        found: list[Attribution] = []
        if site.form & BARE:
            found.append(self._bare(site))
        if site.form & SELF:
            found.append(self._self(site, after=False))
        if site.form & SUPER:
            found.append(self._self(site, after=True))
        if site.form & QUALIFIED:
            found.append(self._qualified(site))
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
        if target.kind == "unknown" and site.name in _BUILTINS and not _star_imports(facts):
            return Attribution(site, "no", "builtin", f"builtins.{site.name}")
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
            return Attribution(site, "no", how, target.name)
        return Attribution(site, "maybe", BY_NAME)

    @staticmethod
    def _enclosing_class(resolver: Resolver, site: SymbolRef) -> SymbolDef | None:
        facts = resolver.facts(site.path)
        if facts is None:
            return None
        classes = {d.symbol: d for d in facts.definitions if d.kind in CLASS_KINDS}
        symbol = site.caller
        while symbol:
            if symbol in classes and symbol != site.caller:
                return classes[symbol]
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


def kept(attributions: Sequence[Attribution]) -> list[Attribution]:
    return [a for a in attributions if a.verdict != "no"]
