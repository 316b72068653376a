"""The references of one parsed file, read from its symbol query's captures.

The query is the language's `.scm` file (`bot.code.queries`); what becomes of
its captures (stop names, call shapes) is the language's `ReferenceRules`
(`bot.code.registry`).

This runs for every captured name of a code base, so the per-node loops only
read offsets and slice the name; each distinct name is then decoded once and
its sites turned into sorted distinct codes `line << 1 | call`.

Lines: where every line break of the file is a `\\n` (most files) and the
language's captures never include a definition's own name, a node's line is
tree-sitter's row + 1. Otherwise it is found from its byte offset (agreeing
with `str.splitlines()`, which also breaks at `\\r`, `\\f` and others), and
names inside a definition's head are dropped (`heads`). Names shorter than two
characters and the language's `stop` names are not kept.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from tree_sitter import Node

from bot.code.lines import ENCODING, LineTable
from bot.code.registry import LANGUAGES, CallShape, ReferenceRules
from bot.symbols.definitions import Heads, in_head

_MIN_NAME = 2
# Bytes that may come between a callee and its `(`; after anything else it is not called.
_BLANKS = frozenset(bytes([b]) for b in b" \t\r\n\x0c\\#")
_OPEN_AFTER = re.compile(rb"(?:[ \t\r\n\x0c]++|\\\r?\n|#[^\n]*+)*+\(")  # possessive: linear

Marks = dict[bytes, list[int]]  # name -> (line or byte offset) << 1 | call


@dataclass(frozen=True, slots=True)
class Reader:
    """A language's reference rules, with names encoded once."""

    stop: frozenset[bytes]
    own_names: bool
    type_checks: frozenset[bytes]
    call: CallShape | None

    @classmethod
    def of(cls, rules: ReferenceRules) -> Reader:
        return cls(
            frozenset(w.encode() for w in rules.stop),
            rules.own_names,
            frozenset(w.encode() for w in rules.type_checks),
            rules.call,
        )


READERS = {language.name: Reader.of(language.references) for language in LANGUAGES}


def references(
    captures: dict[str, list[Node]], src: bytes, table: LineTable, reader: Reader, heads: Heads
) -> dict[str, list[int]]:
    """name -> ascending distinct site codes (`line << 1 | call`)."""
    by_row = not reader.own_names and _breaks_at_newlines(src, table)
    marks: Marks = {}
    called, checks = _calls(marks, captures.get("call", []), src, by_row, reader.type_checks)
    plain = captures.get("ref", [])
    if checks and reader.call is not None:
        plain = [*plain, *_type_arguments(checks, reader.call)]
    _refs(marks, plain, src, by_row, called)
    if reader.call is not None:
        _members(marks, captures.get("member", []), src, by_row, reader.call)
    _objects(marks, captures.get("object", []), src, by_row)
    return _sites(marks, table.byte_starts, reader.stop, heads, by_row)


def _breaks_at_newlines(src: bytes, table: LineTable) -> bool:
    """Whether every line break but a final one is `\\n`, so tree-sitter rows are lines."""
    return src.count(b"\n") == table.count - (not src.endswith(b"\n"))


def _calls(
    marks: Marks, nodes: list[Node], src: bytes, by_row: bool, type_checks: frozenset[bytes]
) -> tuple[set[int], list[Node]]:
    """Mark the callees; their offsets, and those calling a type check (`isinstance`)."""
    called: set[int] = set()
    checks: list[Node] = []
    for node in nodes:
        start = node.start_byte
        raw = src[start : node.end_byte]
        called.add(start)
        mark = (node.start_point.row + 1 if by_row else start) << 1 | 1
        found = marks.get(raw)
        if found is None:
            marks[raw] = [mark]
        else:
            found.append(mark)
        if raw in type_checks:
            checks.append(node)
    return called, checks


def _refs(marks: Marks, nodes: list[Node], src: bytes, by_row: bool, called: set[int]) -> None:
    for node in nodes:
        start = node.start_byte
        if start in called:  # also captured as a call: that is what it is
            continue
        raw = src[start : node.end_byte]
        mark = (node.start_point.row + 1 if by_row else start) << 1
        found = marks.get(raw)
        if found is None:
            marks[raw] = [mark]
        else:
            found.append(mark)


def _members(marks: Marks, nodes: list[Node], src: bytes, by_row: bool, shape: CallShape) -> None:
    """Member names: called when `(` comes next (see `_called`)."""
    for node in nodes:
        start, end = node.start_byte, node.end_byte
        after = src[end : end + 1]
        call = after == b"(" or (after in _BLANKS and _called(node, src, end, shape))
        mark = (node.start_point.row + 1 if by_row else start) << 1 | call
        raw = src[start:end]
        found = marks.get(raw)
        if found is None:
            marks[raw] = [mark]
        else:
            found.append(mark)


def _objects(marks: Marks, nodes: list[Node], src: bytes, by_row: bool) -> None:
    """Plain names before a member access, when upper-case: classes, not variables."""
    for node in nodes:
        start = node.start_byte
        if 0x41 <= src[start] <= 0x5A:  # A-Z
            mark = (node.start_point.row + 1 if by_row else start) << 1
            marks.setdefault(src[start : node.end_byte], []).append(mark)


def _called(node: Node, src: bytes, end: int, shape: CallShape) -> bool:
    """Whether the member name ending at `end` is called, when blanks follow it.

    The source answers when no `(` comes next; the tree answers otherwise (a
    new statement may start with one, after a line break).
    """
    if _OPEN_AFTER.match(src, end) is None:
        return False
    member = node.parent
    call = member.parent if member is not None else None
    return (
        call is not None
        and call.type == shape.node
        and call.child_by_field_name(shape.callee) == member
    )


def _type_arguments(callees: list[Node], shape: CallShape) -> list[Node]:
    """The names in the second argument of `isinstance(x, A)`, `issubclass(c, (A, B))`."""
    out: list[Node] = []
    for callee in callees:
        call = callee.parent
        args = call.child_by_field_name(shape.arguments) if call is not None else None
        if args is None or call is None or call.type != shape.node:
            continue
        given = [c for c in args.named_children if c.type != "comment"]
        if len(given) < 2:
            continue
        second = given[1]
        if second.type == shape.name:
            out.append(second)
        elif second.type == shape.group:
            out.extend(c for c in second.named_children if c.type == shape.name)
    return out


def _sites(
    marks: Marks, starts: list[int], stop: frozenset[bytes], heads: Heads, by_row: bool
) -> dict[str, list[int]]:
    """Marks turned into sorted distinct site codes, by decoded name."""
    out: dict[str, list[int]] = {}
    for raw, found in marks.items():  # once per distinct name
        if len(raw) < _MIN_NAME or raw in stop:
            continue
        codes = found
        if not by_row:
            ranges = heads.get(raw)
            if ranges is not None:
                found = [m for m in found if not in_head(ranges, m >> 1)]
            # bisect_right(starts, offset) is the offset's 1-based line
            codes = [bisect_right(starts, m >> 1) << 1 | (m & 1) for m in found]
        name = raw.decode(ENCODING, "replace")
        if not codes or len(name.split()) != 1:  # packed names are space-separated
            continue
        if name in out:  # two byte strings that decode alike (invalid UTF-8)
            codes = codes + out[name]
        out[name] = sorted(set(codes)) if len(codes) > 1 else codes
    return out
