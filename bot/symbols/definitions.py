"""The definitions of one parsed file, from the candidates its symbol query captured.

Definitions are decided by the chunker's grammars (`Grammar.definition`,
`qualify`), so a definition's symbol is the one its chunk would carry
(`Outer.Inner.method`, `Cache.Get` for a Go receiver). Nesting comes from byte
ranges: a candidate inside the body of an accepted definition is nested in it
(every definition, however small, down through class, impl and namespace
bodies and nested functions); one inside a definition but outside its body is
part of its head (the function under a decorator, the struct of a typedef)
and is not a definition of its own. Decorators and annotations are not part of
a definition's line range here. A Python function under `@overload` is a declaration,
not a definition, when the same scope implements it: only the implementation is kept.

Each definition's head (its byte range minus its body) is kept by name when
asked (`heads`), so that the name written there (`def send`, `type Cache
struct`) is not taken for a reference to it.
"""

from __future__ import annotations

from bisect import bisect_right

from tree_sitter import Node

from bot.code.grammars.base import Grammar, qualify
from bot.code.lines import ENCODING, ENCODING_ERRORS, LineTable
from bot.symbols.declarations import declaration
from bot.symbols.packed import DefRow

_OWNER_LOOKBACK = 8  # definitions before an offset checked for holding it
_MAX_NESTING = 32  # definitions inside definitions; deeper ones are not recorded
# Leading children that are not the definition proper.
_DECORATIONS = frozenset(
    {
        "decorator",
        "annotation",
        "marker_annotation",
        "attribute_list",
        "attribute_item",
        "attribute",
        "comment",
        "line_comment",
        "block_comment",
    }
)

Heads = dict[bytes, list[tuple[int, int]]]  # name -> byte ranges where it is being defined

# An accepted definition that later candidates may be nested in:
# (end, body start, body end, symbol, kind); a plain tuple, this runs per candidate.
_Open = tuple[int, int, int, str, str]


class Definitions:
    """Definitions in document order (`defs`) and, if `keep_heads`, where each is named."""

    def __init__(
        self,
        grammar: Grammar,
        src: bytes,
        table: LineTable,
        *,
        keep_heads: bool,
        language: str = "",
    ) -> None:
        self.grammar = grammar
        self.language = language  # for the definitions no chunk is made of (`declarations`)
        # Table-driven grammars are read here directly: `Grammar.definition` also builds the
        # signature of a chunk header, a tenth of the symbol table's work on Python.
        self.tables = type(grammar).definition is Grammar.definition
        self.src = src
        self.starts = table.byte_starts
        self.keep_heads = keep_heads
        self.defs: list[DefRow] = []
        self.heads: Heads = {}
        # (start byte, body start byte, end byte, symbol) of each definition, in document
        # order: which definition a base class is written in (`owner_of`).
        self.spans: list[tuple[int, int, int, str]] = []
        self._overloads: set[int] = set()  # indexes in `defs` of `@overload` declarations

    def add_all(self, candidates: list[Node]) -> None:
        method_parents = self.grammar.method_parents
        stack: list[_Open] = []
        for node in sorted(candidates, key=_outer_first):
            start = node.start_byte
            while stack and stack[-1][0] <= start:
                stack.pop()
            scope, scope_kind = "", ""
            if stack:
                _, body_start, body_end, scope, scope_kind = stack[-1]
                if not body_start <= start < body_end or len(stack) >= _MAX_NESTING:
                    continue  # in a definition's head (the function under a decorator), or deep
            found = self._definition(node)
            if found is None:
                continue
            start, end, kind, name, body = found
            if kind == "function" and (scope_kind in method_parents or scope_kind == "object"):
                kind = "method"
            symbol = qualify(scope, name)
            if name:
                self._add(node, start, end, body, kind, symbol)
            else:
                kind = scope_kind  # anonymous: what it holds belongs to the enclosing scope
            if body is None:
                stack.append((end, end, end, symbol, kind))
            else:
                stack.append((end, body.start_byte, body.end_byte, symbol, kind))
        self._drop_overloads()

    def _drop_overloads(self) -> None:
        """`@overload` declarations of a symbol the same file also implements."""
        if not self._overloads:
            return
        implemented = {row[1] for i, row in enumerate(self.defs) if i not in self._overloads}
        self.defs = [
            row
            for i, row in enumerate(self.defs)
            if i not in self._overloads or row[1] not in implemented
        ]
        self._overloads.clear()

    def _definition(self, node: Node) -> tuple[int, int, str, str, Node | None] | None:
        """`Grammar.definition`'s (start, end, kind, name, body), or None if it finds none."""
        grammar = self.grammar
        kind = grammar.kinds.get(node.type) if self.tables else None
        if kind is None:
            found = grammar.definition(node, self.src) or declaration(self.language, node, self.src)
            if found is None:
                return None
            return found.start, found.end, found.kind, found.name, found.body
        body = grammar.body(node)  # what Grammar.definition does for a node in its table
        if body is None and node.type in grammar.need_body:
            return None
        return node.start_byte, node.end_byte, kind, grammar.name(node, self.src), body

    def _add(
        self, node: Node, start: int, end: int, body: Node | None, kind: str, symbol: str
    ) -> None:
        starts = self.starts
        own = _own_start(node, start)
        name = symbol.rpartition(".")[2]
        first, last = bisect_right(starts, own), bisect_right(starts, max(own, end - 1))
        if _is_overload(node, self.src):
            self._overloads.add(len(self.defs))
        self.defs.append((name, symbol, kind, first, last))
        self.spans.append((start, end if body is None else body.start_byte, end, symbol))
        if not self.keep_heads:
            return
        ranges = self.heads.setdefault(name.encode(ENCODING, ENCODING_ERRORS), [])
        if body is None:
            ranges.append((start, end))
        else:
            ranges.append((start, body.start_byte))
            ranges.append((body.end_byte, end))

    def owner_of(self, offset: int) -> str:
        """The symbol of the definition whose head holds `offset` (a class's bases), else of
        the innermost one around it (a Go struct's embedded field); "" if none."""
        spans = self.spans
        last = bisect_right(spans, (offset, 1 << 62))
        nearest = spans[max(0, last - _OWNER_LOOKBACK) : last]
        for start, head_end, _, symbol in reversed(nearest):
            if start <= offset < head_end:
                return symbol
        for start, _, end, symbol in reversed(nearest):
            if start <= offset < end:
                return symbol
        return ""


def _outer_first(node: Node) -> tuple[int, int]:
    return node.start_byte, -node.end_byte


def _own_start(node: Node, start: int) -> int:
    """Where the definition proper starts: after its decorators and annotations."""
    first = node.child(0) if node.child_count else None  # a leaf: Ruby's `:name`
    if first is None or (first.type not in _DECORATIONS and first.type != "modifiers"):
        return start
    for child in node.children:
        if child.type in _DECORATIONS:
            continue
        if child.type == "modifiers":
            inner = next((m for m in child.children if m.type not in _DECORATIONS), None)
            if inner is None:
                continue
            return inner.start_byte
        return child.start_byte
    return start


_OVERLOAD_DECORATORS = frozenset({b"@overload", b"@typing.overload", b"@t.overload"})


def _is_overload(node: Node, src: bytes) -> bool:
    """Whether a decorated Python definition is an `@overload` declaration."""
    if node.type != "decorated_definition":
        return False
    return any(
        child.type == "decorator"
        and src[child.start_byte : child.end_byte].strip() in _OVERLOAD_DECORATORS
        for child in node.children
    )


def in_head(ranges: list[tuple[int, int]], offset: int) -> bool:
    return any(lo <= offset < hi for lo, hi in ranges)
