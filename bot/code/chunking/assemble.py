"""Turning candidate pieces into final spans: merging small ones, windowing big ones.

Merge rule, applied to consecutive pieces of one level (siblings):

- a piece under `min_chars` is *small*; under `min_chars // 4` it is a *crumb*
  (a closing brace, `end`, a lone `package` line) unless it is a top-level
  definition;
- a small piece joins a group made only of small pieces, and a crumb joins any
  group (or a group of crumbs joins it), as long as the result stays within
  `max_lines` and `max_chars`; a crumb after a blank line (`#ifdef X`) joins
  what follows rather than what precedes, when it can;
- with `mix=False` (a file's top level) blocks of code and definitions only
  merge among themselves, except crumbs, so imports do not blur a function's
  range.

A merged span takes the kind of its first definition and, as its symbol, the
distinct symbols of its definitions joined by ", " in file order
("Job.push, Job.pop"). Its header is the enclosing scope's header when it holds
several definitions. A single piece over budget becomes line windows that keep
its kind, symbol and header.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.code.chunking.budget import ChunkBudget
from bot.code.lines import LineTable
from bot.models import Span

SYMBOL_MAX = 300
_SEPARATOR = ", "


@dataclass(frozen=True, slots=True)
class Piece:
    """A candidate chunk: a definition (or its head), or code between definitions."""

    start: int
    end: int
    kind: str
    symbol: str = ""
    header: str = ""
    is_def: bool = False


def trimmed(piece: Piece, table: LineTable) -> Piece | None:
    """The piece without leading and trailing blank lines; None if nothing is left."""
    start = table.first_text(piece.start, piece.end)
    if start > piece.end:
        return None
    end = table.last_text(start, piece.end)
    if (start, end) == (piece.start, piece.end):
        return piece
    return Piece(start, end, piece.kind, piece.symbol, piece.header, piece.is_def)


def fits(table: LineTable, budget: ChunkBudget, start: int, end: int) -> bool:
    return end - start + 1 <= budget.max_lines and table.chars(start, end) <= budget.max_chars


def window_ranges(table: LineTable, budget: ChunkBudget, start: int, end: int) -> list[range]:
    """Overlapping line windows covering every non-blank line of start..end."""
    out: list[range] = []
    size = min(budget.window_lines, budget.max_lines)
    tail = max(1, size // 4)
    begin = table.first_text(start, end)
    while begin <= end:
        stop = min(end, begin + size - 1, table.last_within(begin, budget.max_chars))
        if stop < end:
            if end - stop <= tail and fits(table, budget, begin, end):
                stop = end  # swallow a short remainder rather than leave a sliver
            else:
                stop = _soft_stop(table, begin, stop, tail)
        out.append(range(begin, table.last_text(begin, stop) + 1))
        if stop >= end:
            break
        overlap = min(budget.window_overlap, (stop - begin + 1) // 2)
        begin = table.first_text(max(begin + 1, stop + 1 - overlap), end)
    return out


def _soft_stop(table: LineTable, begin: int, stop: int, reach: int) -> int:
    """Prefer ending a window just before a blank line, if one is near its end."""
    floor = max(begin + 1, stop - reach)
    for line in range(stop, floor - 1, -1):
        if table.blank[line + 1] and not table.blank[line]:
            return line
    return stop


def windows(piece: Piece, table: LineTable, budget: ChunkBudget) -> list[Span]:
    return [
        Span(r.start, r.stop - 1, piece.kind, piece.symbol, piece.header)
        for r in window_ranges(table, budget, piece.start, piece.end)
    ]


class _Group:
    __slots__ = ("all_crumbs", "all_small", "family", "pieces")

    def __init__(self, piece: Piece, small: bool, crumb: bool) -> None:
        self.pieces = [piece]
        self.all_small = small
        self.all_crumbs = crumb
        self.family: bool | None = None if crumb else piece.is_def

    def accepts(self, piece: Piece, small: bool, crumb: bool, mix: bool) -> bool:
        if crumb or self.all_crumbs:
            return True
        same = mix or self.family is None or self.family == piece.is_def
        return same and self.all_small and small

    def add(self, piece: Piece, small: bool, crumb: bool) -> None:
        self.pieces.append(piece)
        self.all_small = self.all_small and small
        self.all_crumbs = self.all_crumbs and crumb
        if self.family is None and not crumb:
            self.family = piece.is_def


def merge(
    pieces: Iterable[Piece],
    table: LineTable,
    budget: ChunkBudget,
    scope_header: str = "",
    *,
    mix: bool = True,
) -> list[Span]:
    """Merge small neighbours (see the module docstring) and window what is too big."""
    groups: list[_Group] = []
    todo = list(pieces)
    for index, piece in enumerate(todo):
        size = table.chars(piece.start, piece.end)
        small = size < budget.min_chars
        crumb = size < budget.crumb_chars and (mix or not piece.is_def)
        group = groups[-1] if groups else None
        if (
            group is not None
            and group.accepts(piece, small, crumb, mix)
            and fits(table, budget, group.pieces[0].start, piece.end)
            and not (crumb and _leans_forward(todo, index, table, budget))
        ):
            group.add(piece, small, crumb)
        else:
            groups.append(_Group(piece, small, crumb))
    spans: list[Span] = []
    for group in groups:
        spans.extend(_finish(group.pieces, table, budget, scope_header))
    return spans


def _leans_forward(pieces: list[Piece], index: int, table: LineTable, budget: ChunkBudget) -> bool:
    """A crumb set apart from what precedes it (`#ifdef X` after a blank line) opens the next."""
    piece = pieces[index]
    if index == 0 or index + 1 == len(pieces) or pieces[index - 1].end + 1 >= piece.start:
        return False
    return fits(table, budget, piece.start, pieces[index + 1].end)


def _finish(
    pieces: Sequence[Piece], table: LineTable, budget: ChunkBudget, scope_header: str
) -> list[Span]:
    first, last = pieces[0], pieces[-1]
    if len(pieces) == 1:
        if fits(table, budget, first.start, first.end):
            return [Span(first.start, first.end, first.kind, first.symbol, first.header)]
        return windows(first, table, budget)
    defs = [p for p in pieces if p.is_def]
    lead = defs[0] if defs else first
    symbol = join_symbols(p.symbol for p in (defs or pieces))
    header = lead.header if len(defs) <= 1 else scope_header
    return [Span(first.start, last.end, lead.kind, symbol, header)]


def join_symbols(symbols: Iterable[str]) -> str:
    """Distinct non-empty symbols in order, joined by ", ", kept under SYMBOL_MAX characters."""
    out: list[str] = []
    used = 0
    for symbol in dict.fromkeys(s for s in symbols if s):
        used += len(symbol) + (len(_SEPARATOR) if out else 0)
        if used > SYMBOL_MAX and out:
            break
        out.append(symbol)
    return _SEPARATOR.join(out)
