"""The classes stated types name: a typed receiver's type, resolved in its repository.

A type expression (`bot.symbols.bindings`) is resolved from the file that wrote it:

    Mux, http.Request   the name (or chain) as that file's imports and definitions say
                        (`Resolver.chain`), else the one class of that name in the
                        repository (a Go or Java type of the same package is not imported)
    NewMux(), Foo()     a class called is an instance of it; a function called gives the
                        type its definition states it returns (in its own file)
    Mux>tree            the stated type of field `tree` of Mux (or of a class it inherits
                        from), resolved in the file that states it

The result is a class-like definition, another package's type (external), or unknown.
"""

from __future__ import annotations

from bot.retrieval.symbol_language import language_of
from bot.retrieval.symbol_links import Resolver
from bot.retrieval.symbol_target import CLASS_KINDS, UNKNOWN, Target
from bot.symbols.builtins import GLOBAL_OBJECTS, LITERAL_TYPES
from bot.symbols.links import FIELD_OF

_MAX_STEPS = 6  # calls and fields followed in one expression


def type_target(resolver: Resolver, path: str, expression: str, depth: int = 0) -> Target:
    """What type `expression`, written in `path`, names (see the module docstring)."""
    base, *fields = expression.split(FIELD_OF)
    if not base or depth > _MAX_STEPS:
        return UNKNOWN
    target = _base(resolver, path, base, depth)
    for name in fields:
        target = _field(resolver, target, name, depth + 1)
        if target.kind != "definition":
            return target
    return target


def _base(resolver: Resolver, path: str, base: str, depth: int) -> Target:
    called = base.endswith("()")
    name = base.removesuffix("()")
    target = resolver.chain(path, name)
    if target.kind == "unknown":
        target = _by_name(resolver, name)
    if target.kind == "unknown" and name.partition(".")[0] in _builtins(path):
        return Target("external", name=name)  # `StringBuilder`, `str`, `String`: the language's
    d = target.definition
    if target.kind != "definition" or d is None:
        return target
    cls = resolver.class_of(d)
    if cls is not None:
        return Target("definition", cls)
    if not called:
        return UNKNOWN  # a function used as a type: nothing to call members on
    facts = resolver.facts(d.path)
    result = facts.links.result_of(d.symbol) if facts is not None else ""
    if not result or result == base:
        return UNKNOWN
    return type_target(resolver, d.path, result, depth + 1)


def _builtins(path: str) -> frozenset[str]:
    """Types the language of `path` provides: its global objects, its literals' types."""
    return GLOBAL_OBJECTS.get(language_of(path), frozenset()) | _LITERALS


_LITERALS = frozenset(LITERAL_TYPES.values())


def _by_name(resolver: Resolver, name: str) -> Target:
    """The one class of that last name in the repository (types of the same package)."""
    last = name.rpartition(".")[2]
    found = resolver.named_classes(last)
    return Target("definition", found[0]) if len(found) == 1 else UNKNOWN


def _field(resolver: Resolver, owner: Target, name: str, depth: int) -> Target:
    cls = owner.definition
    if owner.kind != "definition" or cls is None or cls.kind not in CLASS_KINDS:
        return UNKNOWN if owner.kind != "external" else Target("external", name=owner.name)
    for ancestor in resolver.ancestry(cls).order:
        facts = resolver.facts(ancestor.path)
        stated = facts.links.field_type(ancestor.symbol, name) if facts is not None else ""
        if stated:
            return type_target(resolver, ancestor.path, stated, depth)
    return UNKNOWN
