"""Map the model's `[n]` markers to citations that come from retrieval metadata only.

A marker that does not name a retrieved source is dropped, so a citation's
path and line range are always ours, never the model's text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from bot.models import Citation
from bot.retrieval.retriever import Source

if TYPE_CHECKING:
    from bot.symbols.model import SymbolDef, SymbolRef

_MARKER = r"\[\d{1,3}(?:\s*,\s*\d{1,3})*\]"
# "[1][2]" or "[1, 2] [3]" as one group, with the space before it (dropped with a dead marker)
_RUN = re.compile(rf"(\s*){_MARKER}(?:\s*{_MARKER})*")

Permalink = Callable[[Source], str]


def resolve_citations(
    text: str,
    sources: Sequence[Source],
    permalink: Permalink,
    cite: Callable[[Source], Citation] | None = None,
) -> tuple[str, tuple[Citation, ...]]:
    """Replace `[n]` (and `[n, m]`) with source labels; return the cited sources in order.
    `cite`: how a source becomes a citation (default `to_citation`; commits differ)."""
    used: dict[int, Citation] = {}

    def replace(match: re.Match[str]) -> str:
        labels = []
        for raw in re.findall(r"\d+", match.group()):
            n = int(raw)
            if not 1 <= n <= len(sources):
                continue  # not a retrieved source: drop it
            if n not in used:
                source = sources[n - 1]
                used[n] = cite(source) if cite else to_citation(source, permalink)
            labels.append(f"({used[n].label})")
        if not labels:
            return ""
        return match.group(1) + " ".join(dict.fromkeys(labels))

    return _RUN.sub(replace, text), tuple(used.values())


def to_citation(source: Source, permalink: Permalink) -> Citation:
    return Citation(
        repo=source.repo,
        path=source.path,
        start_line=source.start_line,
        end_line=source.end_line,
        url=permalink(source),
        symbol=source.symbol,
    )


class Cites:
    """Citations of what an answer's text names (definitions, call sites, files), in the
    order it names them, one per label; each mention is written as its bold label."""

    def __init__(self, permalink: Permalink) -> None:
        self._permalink = permalink
        self._by_label: dict[tuple[str, str], Citation] = {}

    def at(self, repo: str, path: str, start: int, end: int, symbol: str = "") -> str:
        cite = to_citation(Source(repo, path, "", start, end, symbol, "", 0.0), self._permalink)
        self._by_label.setdefault((repo, cite.label), cite)
        return f"**{cite.label}**"

    def definition(self, d: SymbolDef) -> str:
        return self.at(d.repo, d.path, d.start_line, d.end_line, d.symbol)

    def site(self, site: SymbolRef) -> str:
        return self.at(site.repo, site.path, site.line, site.line, site.caller)

    def all(self) -> tuple[Citation, ...]:
        return tuple(self._by_label.values())
