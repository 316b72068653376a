"""Members a class inherits: "where is `Flask.register_error_handler` defined?".

When no definition has the qualified name asked for, the owner (`Flask`) is looked
up as a class and its method resolution order (`symbol_links.Resolver.ancestry`)
is searched for the member: the first class that defines it is the answer
(`Scaffold.register_error_handler`, inherited through `App`). When none does, the
bases that could not be resolved (another package's classes) are kept, so the
answer can say where the member may come from instead.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.retrieval.symbol_links import Resolver
from bot.retrieval.symbol_target import CLASS_KINDS, LinkLookup
from bot.symbols.model import SymbolDef

MAX_OWNERS = 3  # classes of the owner's name searched


@dataclass(frozen=True, slots=True)
class Inherited:
    """How a class gets a member it does not define itself."""

    owner: SymbolDef  # the class asked about
    chain: tuple[SymbolDef, ...] = ()  # from the owner to the class defining the member
    unresolved: tuple[str, ...] = ()  # bases (as written) not in the index, when none does

    @property
    def definer(self) -> SymbolDef | None:
        return self.chain[-1] if self.chain else None


def inherited(
    table: LinkLookup, name: str, repos: frozenset[str] | None
) -> tuple[list[SymbolDef], Inherited | None]:
    """The definition a dotted `name` (`Owner.member`) reaches through the owner's bases,
    and how; ([], how) when the owner is a class that gets no such member here."""
    owner_name, _, member = name.rpartition(".")
    if not owner_name or not member:
        return [], None
    owners = [
        d for d in table.definitions(owner_name, repos=repos, limit=20) if d.kind in CLASS_KINDS
    ][:MAX_OWNERS]
    resolvers: dict[str, Resolver] = {}
    missing: Inherited | None = None
    for owner in owners:
        resolver = resolvers.setdefault(owner.repo, Resolver(table, owner.repo))
        found, chain = resolver.member(owner, member)
        if found is not None and found.symbol != f"{owner.symbol}.{member}":
            return [found], Inherited(owner, tuple(chain))
        if missing is None:
            missing = Inherited(owner, unresolved=tuple(resolver.ancestry(owner).unresolved))
    return [], missing
