"""What a name resolves to (`Target`), and the part of the symbol store resolution reads
(`LinkLookup`): the values `bot.retrieval.symbol_links` and the resolvers beside it share."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, Protocol

from bot.symbols.model import FileFacts, SymbolAlias, SymbolDef

CLASS_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "object", "type"})


class LinkLookup(Protocol):
    """The part of the symbol store resolution reads."""

    def definitions(
        self, name: str, *, repos: frozenset[str] | None, limit: int = 20
    ) -> list[SymbolDef]: ...
    def file_facts(self, repo: str, paths: Iterable[str]) -> dict[str, FileFacts]: ...
    def paths(self, repo: str) -> list[str]: ...


@dataclass(frozen=True, slots=True)
class Target:
    """What a name or chain refers to."""

    # value: a name assigned the result of a call (`stop = Symbol('stop')`), in `via`
    kind: Literal["definition", "module", "external", "value", "unknown"]
    definition: SymbolDef | None = None
    path: str = ""  # the module's file (or package directory + "/") in this repository
    name: str = ""  # the dotted name, for something outside the repository
    via: tuple[SymbolAlias, ...] = ()  # the aliases followed to get here, first first


UNKNOWN = Target("unknown")
