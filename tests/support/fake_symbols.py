"""A small in-memory `SymbolLookup` over hand-written rows, with the store's documented rules.

Used where a test needs exact control over the symbol table (which lookups
happen, a failing store, a missing name); the end-to-end tests use the real
`SymbolStore` filled by ingest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from bot.index.base import Index
from bot.symbols.links import NO_LINKS
from bot.symbols.model import FileFacts, RankedSymbol, SymbolAlias, SymbolDef, SymbolRef

_BLOCKS = {"section", "window", "module", "block"}


class FakeSymbols:
    def __init__(
        self,
        defs: Iterable[SymbolDef] = (),
        refs: Iterable[SymbolRef] = (),
        *,
        index: Index | None = None,
    ) -> None:
        self.defs = list(defs)
        self.refs = list(refs)
        self.calls: list[str] = []
        # The rows are written for what `index` holds: at its commits, as after an ingest.
        self.at = {s.name: s.commit for s in index.repo_states()} if index is not None else {}

    def commits(self) -> dict[str, str]:
        return dict(self.at)

    def definitions(
        self, name: str, *, repos: frozenset[str] | None, limit: int = 20
    ) -> list[SymbolDef]:
        self.calls.append(f"definitions {name}")
        rows = [d for d in self.defs if repos is None or d.repo in repos]
        found = [d for d in rows if _named(d, name, str.strip)]
        if not found:
            found = [d for d in rows if _named(d, name, str.lower)]
        found.sort(key=lambda d: (d.kind in _BLOCKS, d.repo, d.path, d.start_line))
        return found[:limit]

    def aliases(
        self, name: str, *, repos: frozenset[str] | None, limit: int = 50
    ) -> list[SymbolAlias]:
        """Hand-written rows bind names by definitions only."""
        self.calls.append(f"aliases {name}")
        return []

    def references(
        self,
        name: str,
        *,
        repos: frozenset[str] | None,
        calls_only: bool = False,
        limit: int = 50,
    ) -> list[SymbolRef]:
        self.calls.append(f"references {name}")
        rows = [
            r
            for r in self.refs
            if r.name == name and (repos is None or r.repo in repos) and (r.call or not calls_only)
        ]
        return sorted(rows, key=lambda r: (r.repo, r.path, r.line))[:limit]

    def reference_count(
        self, name: str, *, repos: frozenset[str] | None, calls_only: bool = False
    ) -> int:
        return len(self.references(name, repos=repos, calls_only=calls_only, limit=10**9))

    def top_symbols(self, repo: str, *, limit: int = 30) -> list[RankedSymbol]:
        self.calls.append(f"top_symbols {repo}")
        ranked = []
        for d in self.defs:
            if d.repo != repo:
                continue
            files = {r.path for r in self.refs if r.repo == repo and r.name == d.name}
            referrers = len(files - {d.path})
            if referrers:
                ranked.append(RankedSymbol(d, float(referrers), referrers))
        ranked.sort(key=lambda r: (-r.score, r.definition.path, r.definition.start_line))
        return ranked[:limit]

    def file_facts(self, repo: str, paths: Iterable[str]) -> dict[str, FileFacts]:
        """Each file's definitions; no imports or bases (hand-written rows have none)."""
        self.calls.append(f"file_facts {repo}")
        wanted = set(paths)
        out: dict[str, FileFacts] = {}
        for d in self.defs:
            if d.repo == repo and d.path in wanted:
                found = out.get(d.path)
                defs = (*found.definitions, d) if found is not None else (d,)
                out[d.path] = FileFacts(repo, d.path, defs, NO_LINKS)
        return out

    def paths(self, repo: str) -> list[str]:
        return sorted({d.path for d in self.defs if d.repo == repo})


def _named(d: SymbolDef, name: str, f: Callable[[str], str]) -> bool:
    if "." in name:
        return f(d.symbol) == f(name) or f(d.symbol).endswith("." + f(name))
    return f(d.name) == f(name)
