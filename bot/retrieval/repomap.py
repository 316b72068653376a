"""A repository map: the directory tree with file counts, and the symbols that matter most.

What an "how is this organised?" question needs and similarity search cannot
give: the shape of the whole repository. The tree comes from the index's
manifest (every indexed path), the symbols from the symbol table, ranked by
how many other files refer to them. Maps are cached per indexed commit (the version
the writer bumps, read from the shared state), so a repository is walked once per
update, not once per question; a map built while the symbol table was not yet at
that commit is not cached. Rendering fits
several repositories into one small token budget.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from bot.errors import BotError
from bot.index.base import Index
from bot.models import RepoState, line_label
from bot.retrieval.commit_cache import CommitCache
from bot.retrieval.dirtree import DirNode, build_tree, one_line, tree_lines
from bot.retrieval.intent import file_kind
from bot.symbols.model import RankedSymbol, SymbolDef
from bot.text.counting import count_tokens

log = logging.getLogger(__name__)

MAP_TOKENS = 1500  # the whole map, however many repositories it covers
MAX_REPOS = 8  # sections in one map; the rest are named in one line
TOP_SYMBOLS = 12  # per repository when it is alone; shared out among several
CACHE_SIZE = 32
# Detail levels tried in order until the map fits: (tree lines, all repositories together;
# entries per directory).
_DETAIL = ((40, 8), (30, 6), (20, 5), (12, 4), (8, 3))


class RankedSymbols(Protocol):
    def top_symbols(self, repo: str, *, limit: int = 30) -> list[RankedSymbol]: ...

    def commits(self) -> dict[str, str]: ...


@dataclass(frozen=True, slots=True)
class RepoMap:
    repo: str
    files: int
    languages: tuple[tuple[str, int], ...]  # most files first
    root: DirNode
    top: tuple[RankedSymbol, ...]  # most referred-to first


@dataclass(frozen=True, slots=True)
class RenderedMap:
    text: str  # markdown: per repository a header, a fenced tree and a symbol list
    symbols: tuple[SymbolDef, ...]  # the symbols the text lists, to cite


class RepoMapper:
    """Builds and caches maps; safe to share between threads."""

    def __init__(self, index: Index, symbols: RankedSymbols | None) -> None:
        self._index = index
        self._symbols = symbols
        self._cache: CommitCache[RepoMap] = CommitCache(CACHE_SIZE)

    def map_of(self, state: RepoState) -> RepoMap:
        cached = self._cache.get(state)
        if cached is not None:
            return cached
        built, complete = self._build(state)
        if complete:  # else the symbol table was behind or failing: ask again next time
            self._cache.put(state, built)
        return built

    def maps(self, states: Iterable[RepoState]) -> list[RepoMap]:
        return [self.map_of(s) for s in sorted(states, key=lambda s: s.name)]

    def _build(self, state: RepoState) -> tuple[RepoMap, bool]:
        """The map, and whether it is final for this commit (its symbols were read)."""
        repo = state.name
        manifest = self._index.manifest(repo)
        languages = Counter(entry.language or "other" for entry in manifest.values())
        top, complete = self._top(state)
        built = RepoMap(
            repo=repo,
            files=len(manifest),
            languages=tuple(languages.most_common()),
            root=build_tree(manifest),
            top=tuple(top),
        )
        return built, complete

    def _top(self, state: RepoState) -> tuple[list[RankedSymbol], bool]:
        if self._symbols is None:
            return [], True
        repo = state.name
        try:
            if self._symbols.commits().get(repo) != state.commit:
                # Rows of another commit would cite the wrong lines. The ingest writes the
                # table just after the index (maybe in another process): not final yet.
                log.warning("symbol table of %s is not at the indexed commit; map without it", repo)
                return [], False
            ranked = self._symbols.top_symbols(repo, limit=TOP_SYMBOLS * 2)
        except BotError as exc:  # the tree alone is still a useful map
            log.warning("no top symbols for %s: %s", repo, exc.detail or exc.user_message)
            return [], False
        # The architecture is in the code: a helper class in a test file is no landmark.
        ranked.sort(key=lambda r: file_kind(r.definition.path) != "code")
        return ranked[:TOP_SYMBOLS], True


# -- rendering --------------------------------------------------------------------------------


def render_maps(maps: Sequence[RepoMap], *, budget: int = MAP_TOKENS) -> RenderedMap:
    """Every map in one text of at most `budget` tokens, detail shrinking as needed."""
    shown, hidden = list(maps[:MAX_REPOS]), maps[MAX_REPOS:]
    if not shown:
        return RenderedMap("Nothing is indexed here yet.", ())
    per_repo = max(3, TOP_SYMBOLS // len(shown))
    rendered = RenderedMap("", ())
    for lines, entries in _DETAIL:
        rendered = _render(shown, hidden, max(4, lines // len(shown)), entries, per_repo)
        if count_tokens(rendered.text) <= budget:
            return rendered
        per_repo = max(2, per_repo - 2)
    return _clipped(rendered, budget)


def _render(
    shown: Sequence[RepoMap], hidden: Sequence[RepoMap], lines: int, entries: int, per_repo: int
) -> RenderedMap:
    sections: list[str] = []
    symbols: list[SymbolDef] = []
    for m in shown:
        tree = tree_lines(m.root, lines=lines, entries=entries)
        if len(tree) > lines + 2:  # only the top level can overrun the budget
            tree = [*tree[:lines], "…"]
        top = [r for r in m.top if r.definition.repo == m.repo][:per_repo]
        symbols.extend(r.definition for r in top)
        sections.append(_section(m, tree, top))
    if hidden:
        names = ", ".join(m.repo for m in hidden[:20])
        more = f" and {len(hidden) - 20} more" if len(hidden) > 20 else ""
        sections.append(f"Also indexed, not mapped here: {names}{more}.")
    return RenderedMap("\n\n".join(sections), tuple(symbols))


def _section(m: RepoMap, tree: list[str], top: Sequence[RankedSymbol]) -> str:
    langs = ", ".join(f"{lang} {n:,}" for lang, n in m.languages[:4])
    files = f"{m.files:,} file" if m.files == 1 else f"{m.files:,} files"
    head = f"**{m.repo}**: {files}" + (f" ({langs})" if langs else "")
    parts = [head]
    if tree:
        parts.append("```\n" + "\n".join(tree) + "\n```")
    if top:
        parts.append("Most referenced symbols:")
        parts.extend(_symbol_line(r) for r in top)
    return "\n".join(parts)


def _symbol_line(r: RankedSymbol) -> str:
    d = r.definition
    where = f"• {d.kind} `{one_line(d.symbol)}` {one_line(_label(d))}"
    if not r.referrers:
        return where
    return f"{where} (used in {r.referrers:,} other file{'' if r.referrers == 1 else 's'})"


def _label(d: SymbolDef) -> str:
    return line_label(d.path, d.start_line, d.end_line)


def _clipped(rendered: RenderedMap, budget: int) -> RenderedMap:
    """Last resort for very many or very long names: whole lines kept while they fit."""
    kept: list[str] = []
    used = 0
    fence_open = False
    for line in rendered.text.split("\n"):
        cost = count_tokens(line) + 1
        if used + cost > budget - 10:
            break
        kept.append(line)
        used += cost
        fence_open ^= line.startswith("```")
    if fence_open:
        kept.append("```")
    text = "\n".join(kept)
    shown = tuple(d for d in rendered.symbols if one_line(_label(d)) in text)
    return RenderedMap(text, shown)
