"""Chunking source code along its definitions, with tree-sitter.

The file is one scope: its top-level definitions become pieces, and the code
between them becomes "block" pieces, so every line lands somewhere. A
definition that fits the budget stays whole. A bigger one is opened: its head
(signature, docstring, fields up to the first member), its nested definitions
and the code between them become the pieces of a new scope, recursively. A big
definition without nested ones is cut into line windows. Each scope's pieces
are then merged (see `assemble`).

Only top-level nodes, transparent containers and the bodies of definitions
that are too big are visited, so the work grows with the file, not its depth.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tree_sitter import Node

from bot.code.chunking.assemble import Piece, fits, merge, trimmed
from bot.code.chunking.budget import ChunkBudget
from bot.code.grammars.base import Definition, Grammar, qualify
from bot.code.lines import LineTable
from bot.models import Span

HEADER_MAX = 400
_MAX_TRANSPARENT_DEPTH = 8


@dataclass(frozen=True, slots=True)
class _Found:
    start: int  # first line, attached comments included
    end: int
    definition: Definition
    extra: tuple[str, ...] = ()  # names of definitions sharing its lines (never opened)


@dataclass(frozen=True, slots=True)
class _Scope:
    kind: str  # "" for the file
    symbol: str
    signatures: tuple[str, ...]  # enclosing signatures, outermost first


class SyntaxChunker:
    """Chunks one parsed file; create one per file."""

    def __init__(self, grammar: Grammar, src: bytes, table: LineTable, budget: ChunkBudget) -> None:
        self.grammar = grammar
        self.src = src
        self.table = table
        self.budget = budget

    def chunk(self, root: Node) -> list[Span]:
        found = self._find(root.named_children, 0)
        return self._scope_spans(found, 1, self.table.count, _Scope("", "", ()))

    # -- finding definitions -------------------------------------------------

    def _find(self, nodes: Sequence[Node], depth: int, floor: int = 0) -> list[_Found]:
        """Definitions among `nodes`; comments on line `floor` or above are never attached."""
        grammar, out = self.grammar, []
        for index, node in enumerate(nodes):
            definition = grammar.definition(node, self.src)
            if definition is not None:
                start = self._attach(nodes, index, self._line(definition.start), floor)
                out.append(_Found(start, self._end_line(definition.end), definition))
            elif depth < _MAX_TRANSPARENT_DEPTH and grammar.is_transparent(node):
                out.extend(self._find(node.named_children, depth + 1, floor))
        return out

    def _attach(self, nodes: Sequence[Node], index: int, start: int, floor: int) -> int:
        """Extend `start` over the comments (attributes, decorators) right above it."""
        attached = self.grammar.attached
        while index > 0 and nodes[index - 1].type in attached:
            node = nodes[index - 1]
            if self._end_line(node.end_byte) < start - 1:
                break  # a blank line separates it from the definition
            node_start = self._line(node.start_byte)
            if node_start <= floor:
                break  # on the enclosing definition's first line: `class A {  // ...`
            if index > 1 and self._end_line(nodes[index - 2].end_byte) >= node_start:
                break  # a trailing comment of the previous statement
            start = min(start, node_start)
            index -= 1
        return start

    def _line(self, offset: int) -> int:
        return self.table.line_of_byte(offset)

    def _end_line(self, end: int) -> int:
        return self.table.line_of_byte(max(0, end - 1))

    # -- building spans ------------------------------------------------------

    def _scope_spans(self, found: list[_Found], lo: int, hi: int, scope: _Scope) -> list[Span]:
        """Spans for lines lo..hi of a scope holding the definitions `found`."""
        spans: list[Span] = []
        run: list[Piece] = []
        header = _header(scope.signatures)
        mix = bool(scope.kind)  # inside a definition everything belongs to it
        cursor = lo
        for item in _normalized(found, lo, hi):
            self._gap(run, cursor, item.start - 1, scope, header, first=cursor == lo)
            opened = self._definition(item, scope)
            if isinstance(opened, Piece):
                run.append(opened)
            else:  # an opened definition: its spans are final, runs do not cross it
                spans.extend(merge(run, self.table, self.budget, header, mix=mix))
                spans.extend(opened)
                run = []
            cursor = item.end + 1
        self._gap(run, cursor, hi, scope, header, first=cursor == lo)
        spans.extend(merge(run, self.table, self.budget, header, mix=mix))
        return spans

    def _gap(
        self, run: list[Piece], start: int, end: int, scope: _Scope, header: str, *, first: bool
    ) -> None:
        if start > end:
            return
        if scope.kind:  # code inside a definition belongs to it; its head counts as the definition
            piece = Piece(start, end, scope.kind, scope.symbol, header, is_def=first)
        else:
            piece = Piece(start, end, "block")
        kept = trimmed(piece, self.table)
        if kept is not None:
            run.append(kept)

    def _definition(self, item: _Found, scope: _Scope) -> Piece | list[Span]:
        definition = item.definition
        kind = definition.kind
        if kind == "function" and scope.kind in self.grammar.method_parents:
            kind = "method"
        symbol = qualify(scope.symbol, definition.name)
        signatures = (*scope.signatures, definition.signature)
        piece = Piece(item.start, item.end, kind, symbol, _header(signatures), is_def=True)
        if item.extra:
            names = (symbol, *(qualify(scope.symbol, name) for name in item.extra))
            return Piece(
                item.start, item.end, kind, ", ".join(dict.fromkeys(names)), piece.header, True
            )
        if definition.body is None or fits(self.table, self.budget, item.start, item.end):
            return piece
        members = self.grammar.members(definition.body)
        children = [
            child
            for child in self._find(members, 0, floor=self._line(definition.start))
            if item.start <= child.start and child.end <= item.end
        ]
        if not children:
            return piece  # too big and nothing inside to split at: windows, later
        inner = _Scope(kind, symbol, signatures)
        return self._scope_spans(children, item.start, item.end, inner)


def _normalized(found: list[_Found], lo: int, hi: int) -> list[_Found]:
    """Definitions clamped to lo..hi, in order, with any that share lines fused."""
    out: list[_Found] = []
    for item in sorted(found, key=lambda f: (f.start, -f.end)):
        start, end = max(lo, item.start), min(hi, item.end)
        if start > end:
            continue
        if out and start <= out[-1].end:
            prev = out[-1]
            extra = (*prev.extra, item.definition.name, *item.extra)
            out[-1] = _Found(prev.start, max(prev.end, end), prev.definition, extra)
        elif (start, end) != (item.start, item.end):
            out.append(_Found(start, end, item.definition, item.extra))
        else:
            out.append(item)
    return out


def _header(signatures: tuple[str, ...]) -> str:
    """Signatures joined by newlines, dropping the outermost ones to stay under HEADER_MAX."""
    kept = [s for s in signatures if s]
    while len(kept) > 1 and sum(len(s) + 1 for s in kept) > HEADER_MAX:
        kept.pop(0)
    return "\n".join(kept)[:HEADER_MAX]
