"""Definitions and references of one parsed file, for the symbol table.

One tree-sitter query per language (`queries`) runs over the file in C and
captures candidate definitions, names and call sites; Python then only looks
at what was captured.

Definitions are decided by the chunker's grammars (`Grammar.definition`,
`qualify`), so a definition's symbol is the one its chunk would carry
(`Outer.Inner.method`, `Cache.Get` for a Go receiver). Nesting comes from byte
ranges: a candidate inside the body of an accepted definition is nested in it
(every definition, however small, down through class, impl and namespace
bodies and nested functions); one inside a definition but outside its body is
part of its head (the function under a decorator, the struct of a typedef)
and is not a definition of its own. Decorators and annotations are not part of
a definition's line range here.

A definition's own name in its head (`def send`, `type Cache struct`, the
`name_t` of `typedef struct {...} name_t;`) is not a reference to it; names
shorter than two characters and the language's `stop` names are not kept.

Extraction never raises: on a failure it logs and keeps what it found.
"""

from __future__ import annotations

import logging
from bisect import bisect_right

from tree_sitter import Node, QueryCursor

from bot.ingest.chunking import Parsed, analyze_file, parse_file
from bot.ingest.chunking.grammar import Grammar, qualify
from bot.ingest.chunking.grammars import GRAMMARS
from bot.ingest.chunking.lines import ENCODING, ENCODING_ERRORS, LineTable
from bot.models import Span
from bot.symbols.model import FileSymbols
from bot.symbols.packed import EMPTY, DefRow, PackedSymbols
from bot.symbols.queries import SPECS, symbol_query

__all__ = ["analyze", "extract", "extract_packed", "extract_parsed", "extract_text"]

log = logging.getLogger(__name__)

_MAX_NESTING = 32  # definitions inside definitions; deeper ones are not recorded
_MIN_NAME = 2
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
_STOP = {name: frozenset(w.encode() for w in spec.stop) for name, spec in SPECS.items()}

_Heads = dict[bytes, list[tuple[int, int]]]  # name -> byte ranges where it is being defined


def extract(root: Node, src: bytes, table: LineTable, language: str) -> FileSymbols:
    """Every definition and reference of a file parsed as `language` from `src`.

    `table` must have been built with byte offsets from the text `src` encodes.
    """
    return extract_packed(root, src, table, language).to_file_symbols()


def analyze(
    path: str, text: str, language: str, *, symbols: bool = True
) -> tuple[list[Span], PackedSymbols]:
    """A file's chunk spans (`chunk_file`'s) and, from the same parse, its symbols.

    A pure function of its arguments with picklable results, so it can run in a
    worker process. Files that are not parsed have no symbols; so does every file
    when `symbols` is False.
    """
    spans, parsed = analyze_file(path, text, language)
    if not symbols or parsed is None:
        return spans, EMPTY
    return spans, extract_parsed(parsed)


def extract_parsed(parsed: Parsed) -> PackedSymbols:
    return extract_packed(parsed.root, parsed.src, parsed.table, parsed.language)


def extract_text(path: str, text: str, language: str) -> PackedSymbols:
    """Parse and extract, for a file that needs no chunking."""
    try:
        parsed = parse_file(text, language)
    except Exception:  # a parser failure must not stop an ingest
        log.warning("could not parse %s as %s for symbols", path, language, exc_info=True)
        return EMPTY
    return EMPTY if parsed is None else extract_parsed(parsed)


def extract_packed(root: Node, src: bytes, table: LineTable, language: str) -> PackedSymbols:
    """`extract` in the compact form ingest keeps (see `packed`)."""
    grammar = GRAMMARS.get(language)
    if grammar is None or language not in SPECS:
        return EMPTY
    try:
        captures = QueryCursor(symbol_query(language)).captures(root)
    except Exception:  # odd trees must not stop an ingest
        log.warning("could not query a %s file for symbols", language, exc_info=True)
        return EMPTY
    found = _Definitions(grammar, src, table)
    try:
        found.add_all(captures.get("def", []))
    except Exception:
        log.warning("definitions of a %s file stopped early", language, exc_info=True)
    try:
        sites = _references(captures, src, table, _STOP[language], found.heads)
    except Exception:
        log.warning("references of a %s file were not read", language, exc_info=True)
        sites = {}
    return PackedSymbols.from_sites(found.defs, sites, ordered=True)


# An accepted definition that later candidates may be nested in:
# (end, body start, body end, symbol, kind); a plain tuple, this runs per candidate.
_Open = tuple[int, int, int, str, str]


class _Definitions:
    """Definitions in document order, with the byte ranges that name each of them."""

    def __init__(self, grammar: Grammar, src: bytes, table: LineTable) -> None:
        self.grammar = grammar
        self.src = src
        self.table = table
        self.defs: list[DefRow] = []
        self.heads: _Heads = {}

    def add_all(self, candidates: list[Node]) -> None:
        grammar, src = self.grammar, self.src
        stack: list[_Open] = []
        for node in sorted(candidates, key=lambda n: (n.start_byte, -n.end_byte)):
            start = node.start_byte
            while stack and stack[-1][0] <= start:
                stack.pop()
            scope, scope_kind = "", ""
            if stack:
                _, body_start, body_end, scope, scope_kind = stack[-1]
                if not body_start <= start < body_end or len(stack) >= _MAX_NESTING:
                    continue  # in a definition's head (the function under a decorator), or deep
            found = grammar.definition(node, src)
            if found is None:
                continue
            kind = found.kind
            if kind == "function" and scope_kind in grammar.method_parents:
                kind = "method"
            symbol = qualify(scope, found.name)
            if found.name:
                self._add(node, found.start, found.end, found.body, kind, symbol)
            else:
                kind = scope_kind  # anonymous: what it holds belongs to the enclosing scope
            body = found.body
            if body is None:
                stack.append((found.end, found.end, found.end, symbol, kind))
            else:
                stack.append((found.end, body.start_byte, body.end_byte, symbol, kind))

    def _add(
        self, node: Node, start: int, end: int, body: Node | None, kind: str, symbol: str
    ) -> None:
        starts = self.table.byte_starts
        own = _own_start(node, start)
        name = symbol.rpartition(".")[2]
        first, last = bisect_right(starts, own), bisect_right(starts, max(own, end - 1))
        self.defs.append((name, symbol, kind, first, last))
        ranges = self.heads.setdefault(name.encode(ENCODING, ENCODING_ERRORS), [])
        if body is None:
            ranges.append((start, end))
        else:
            ranges.append((start, body.start_byte))
            ranges.append((body.end_byte, end))


def _own_start(node: Node, start: int) -> int:
    """Where the definition proper starts: after its decorators and annotations."""
    first = node.child(0)
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


def _references(
    captures: dict[str, list[Node]],
    src: bytes,
    table: LineTable,
    stop: frozenset[bytes],
    heads: _Heads,
) -> dict[str, list[int]]:
    """name -> ascending site codes (`line << 1 | call`), repeats allowed.

    This runs for every identifier in a code base, so it allocates little: one list
    per distinct name, turned from offsets into codes in place.
    """
    at: dict[bytes, list[int]] = {}  # name -> start offsets: the per-node loop stays minimal
    for node in captures.get("ref", ()):
        start = node.start_byte
        raw = src[start : node.end_byte]
        offsets = at.get(raw)
        if offsets is None:
            at[raw] = [start]
        else:
            offsets.append(start)
    calls = {node.start_byte for node in captures.get("call", ())}
    starts = table.byte_starts  # bisect_right(starts, offset) is the offset's 1-based line
    out: dict[str, list[int]] = {}
    for raw, codes in at.items():  # once per distinct name
        if len(raw) < _MIN_NAME or raw in stop:
            continue
        ranges = heads.get(raw)
        if ranges is not None:
            codes[:] = [o for o in codes if not _defining(ranges, o)]
        for i, o in enumerate(codes):
            codes[i] = bisect_right(starts, o) << 1 | (o in calls)
        name = raw.decode(ENCODING, "replace")
        if codes and len(name.split()) == 1:  # packed names are space-separated
            if name in out:  # two byte strings that decode alike (invalid UTF-8)
                codes += out[name]
            codes.sort()
            out[name] = codes
    return out


def _defining(ranges: list[tuple[int, int]], offset: int) -> bool:
    return any(lo <= offset < hi for lo, hi in ranges)
