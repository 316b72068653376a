"""Values of the symbol and reference table built at ingest.

Per file, tree-sitter gives every definition (qualified the way chunks are:
`Outer.Inner.method`) and the references to names that its language's rules
record (calls, member accesses, types, imports; not plain variables: see
`bot.code.queries`), calls marked, with the enclosing definition as the
caller, and the names it binds another way (`Alias`: re-exports, assignments of
other names, members made in a loop over names). The store
(`bot.store.symbols.table`) keeps them per repository and answers "where is X
defined", "who calls X" and "which symbols matter most" exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.symbols.links import NO_LINKS, FileLinks


@dataclass(frozen=True, slots=True)
class Definition:
    """One definition in a file; `name` is the last segment of `symbol`."""

    name: str
    symbol: str  # qualified: "Session.send"
    kind: str  # a chunk kind: function, method, class, struct, ...
    start_line: int  # 1-based, inclusive, decorators and attached comments excluded
    end_line: int


@dataclass(frozen=True, slots=True)
class Reference:
    """One use of a name in a file (not its own definition)."""

    name: str  # the identifier as written, last segment only ("send" for `self.send()`)
    line: int
    caller: str  # qualified symbol of the innermost enclosing definition, "" at module level
    call: bool  # the name is called here (`send(...)`, `obj.send(...)`, `new Send()`)
    form: int = 0  # how it was written (`bot.symbols.links` bits); 0: not recorded


ALIAS = "alias"  # `exports.x = other.x`, `export {a as b}`, `pub use a::B as C`, `b = a`
ASSIGNED = "assigned"  # `get = make_wrapper('get')` at the top of a module or class
GENERATED = "generated"  # `for (const m of methods) ky[m] = ...`, `setattr(cls, name, f)`
EVERY_NAME = "*"  # an alias's name for `export * from './m'`, or members of names not listed


@dataclass(frozen=True, slots=True)
class Alias:
    """A name a file binds other than by a definition of its own (kinds above)."""

    name: str  # the name bound, or EVERY_NAME
    kind: str
    # alias: what it names, as written (`other.x`, `a`, `Deserializer`, "*"); assigned: the
    # expression (`make_wrapper('get')`); generated: where the names come from, as written
    # (`requestMethods`, `['get', 'post']`)
    target: str
    module: str = ""  # the module `target` comes from, as written (`./m`, `.x`, `crate::de`)
    owner: str = ""  # what the name is bound on: "" (the module), `module.exports`, `ky`, `self`
    start_line: int = 0
    end_line: int = 0


@dataclass(frozen=True, slots=True)
class FileSymbols:
    definitions: tuple[Definition, ...] = ()
    references: tuple[Reference, ...] = ()
    links: FileLinks = NO_LINKS
    aliases: tuple[Alias, ...] = ()


@dataclass(frozen=True, slots=True)
class SymbolDef:
    """A definition located in an indexed repository."""

    repo: str
    path: str
    name: str
    symbol: str
    kind: str
    start_line: int
    end_line: int


@dataclass(frozen=True, slots=True)
class SymbolRef:
    """A reference located in an indexed repository."""

    repo: str
    path: str
    name: str
    line: int
    caller: str
    call: bool
    form: int = 0  # how it was written (`bot.symbols.links` bits); 0: not recorded


@dataclass(frozen=True, slots=True)
class SymbolAlias:
    """An `Alias` located in an indexed repository."""

    repo: str
    path: str
    name: str
    kind: str
    target: str
    module: str
    owner: str
    start_line: int
    end_line: int


@dataclass(frozen=True, slots=True)
class RankedSymbol:
    """A definition with its importance: how much the rest of the code refers to it."""

    definition: SymbolDef
    score: float  # higher is more central (see `SymbolStore.top_symbols`)
    referrers: int  # distinct other files that refer to its name


@dataclass(frozen=True, slots=True)
class FileFacts:
    """One indexed file's definitions and links: what resolving its names needs."""

    repo: str
    path: str
    definitions: tuple[SymbolDef, ...]
    links: FileLinks
    aliases: tuple[SymbolAlias, ...] = ()
