"""The references of one parsed file, read from its symbol query's captures.

The query is the language's `.scm` file (`bot.code.queries`); what becomes of
its captures (stop names, call shapes) is the language's `ReferenceRules`
(`bot.code.registry`).

This runs for every captured name of a code base, so the per-node loops only
read offsets and slice the name; each distinct name is then decoded once and
its sites turned into sorted distinct codes `line << 1 | call`. In a language
whose rules record receivers, each site also gets its form (how it was written,
`bot.symbols.links`): a bare call, a member of `self`, of an imported name, of a typed
variable, of a builtin, of another object; the receivers of calls on imported names and
builtins, and the types of typed receivers, are kept too. Python's receivers are read
from its `@member` captures (`python_links`), other languages' from the node around
each callee (`receivers`).

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
from collections.abc import Callable
from dataclasses import dataclass, field

from tree_sitter import Node

from bot.code.lines import ENCODING, LineTable
from bot.code.registry import LANGUAGES, CallShape, ReferenceRules
from bot.symbols.definitions import Heads, in_head
from bot.symbols.links import FORM_BITS
from bot.symbols.python_links import BUILTIN_FORM, OTHER_FORM, QUALIFIED_FORM, SELF_FORM, receiver
from bot.symbols.receivers import TYPED_FORM, ReceiverReader

_MIN_NAME = 2
# Bytes that may come between a callee and its `(`; after anything else it is not called.
_BLANKS = frozenset(bytes([b]) for b in b" \t\r\n\x0c\\#")
_OPEN_AFTER = re.compile(rb"(?:[ \t\r\n\x0c]++|\\\r?\n|#[^\n]*+)*+\(")  # possessive: linear

# name -> (line or byte offset) << 1 | call, then `<< 3 | form index` where forms are kept
Marks = dict[bytes, list[int]]
_BARE_FORM = 1
_FORM_SHIFT = 3
_ONE_FORM = [bytes((bit,)) for bit in FORM_BITS]
# One byte that, before `self.`, makes it part of a longer name or chain (`myself.`, `x.self.`).
_NAME_BYTE = frozenset(
    bytes([b]) for b in b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_."
)


@dataclass(frozen=True, slots=True)
class Reader:
    """A language's reference rules, with names encoded once."""

    stop: frozenset[bytes]
    own_names: bool
    type_checks: frozenset[bytes]
    call: CallShape | None
    receivers: bool

    @classmethod
    def of(cls, rules: ReferenceRules) -> Reader:
        return cls(
            frozenset(w.encode() for w in rules.stop),
            rules.own_names,
            frozenset(w.encode() for w in rules.type_checks),
            rules.call,
            rules.receivers,
        )


@dataclass(slots=True)
class Found:
    """A file's references: name -> ascending distinct site codes (`line << 1 | call`),
    their forms (one byte a site, by name; empty where the language records none), the
    receivers of calls on bound names and builtins (line, name, chain) and of calls on
    typed receivers (line, name, receiver, type)."""

    sites: dict[str, list[int]]
    forms: dict[str, bytes]
    quals: list[tuple[int, str, str]]
    typed: list[tuple[int, str, str, str]] = field(default_factory=list)


# The type expression of a receiver written `chain` at a byte offset ("" when not stated).
Typer = Callable[[str, int], str]


READERS = {language.name: Reader.of(language.references) for language in LANGUAGES}


def references(
    captures: dict[str, list[Node]],
    src: bytes,
    table: LineTable,
    reader: Reader,
    heads: Heads,
    bound: frozenset[bytes] = frozenset(),
    *,
    members: ReceiverReader | None = None,
    typer: Typer | None = None,
) -> Found:
    """The file's references; `bound`: the names its imports and top-level definitions bind
    (what makes a call's receiver QUALIFIED). `members` classifies the callees of languages
    that call through member accesses; `typer` types Python's other receivers."""
    by_row = not reader.own_names and _breaks_at_newlines(src, table)
    on_members = members is not None and members.enabled
    shift = _FORM_SHIFT if reader.receivers or on_members else 0
    marks: Marks = {}
    found = Found({}, {}, [])
    calls = captures.get("call", [])
    checks: list[Node] = []
    if members is not None and on_members:
        called = _calls_with_forms(marks, calls, src, by_row, members, table, found)
    else:
        bare = _BARE_FORM if shift else 0
        called, checks = _calls(marks, calls, src, by_row, reader.type_checks, bare)
    plain = captures.get("ref", [])
    if checks and reader.call is not None:
        plain = [*plain, *_type_arguments(checks, reader.call)]
    _refs(marks, plain, src, by_row, called, shift)
    if reader.call is not None:
        member_nodes = captures.get("member", [])
        if shift:
            at = _Python(reader.call, bound, table, typer, found)
            _members_with_forms(marks, member_nodes, src, by_row, at)
        else:
            _members(marks, member_nodes, src, by_row, reader.call)
    _objects(marks, captures.get("object", []), src, by_row, shift)
    found.sites, found.forms = _sites(marks, table.byte_starts, reader.stop, heads, by_row, shift)
    return found


def _breaks_at_newlines(src: bytes, table: LineTable) -> bool:
    """Whether every line break but a final one is `\\n`, so tree-sitter rows are lines."""
    return src.count(b"\n") == table.count - (not src.endswith(b"\n"))


def _calls(
    marks: Marks,
    nodes: list[Node],
    src: bytes,
    by_row: bool,
    type_checks: frozenset[bytes],
    form: int,
) -> tuple[set[int], list[Node]]:
    """Mark the callees; their offsets, and those calling a type check (`isinstance`)."""
    called: set[int] = set()
    checks: list[Node] = []
    shift = _FORM_SHIFT if form else 0
    for node in nodes:
        start = node.start_byte
        raw = src[start : node.end_byte]
        called.add(start)
        mark = ((node.start_point.row + 1 if by_row else start) << 1 | 1) << shift | form
        found = marks.get(raw)
        if found is None:
            marks[raw] = [mark]
        else:
            found.append(mark)
        if raw in type_checks:
            checks.append(node)
    return called, checks


def _refs(
    marks: Marks, nodes: list[Node], src: bytes, by_row: bool, called: set[int], shift: int
) -> None:
    for node in nodes:
        start = node.start_byte
        if start in called:  # also captured as a call: that is what it is
            continue
        raw = src[start : node.end_byte]
        mark = (node.start_point.row + 1 if by_row else start) << (1 + shift)
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


@dataclass(frozen=True, slots=True)
class _Python:
    """What classifying Python's member calls needs."""

    shape: CallShape
    bound: frozenset[bytes]
    table: LineTable
    typer: Typer | None
    found: Found


def _line(node: Node, by_row: bool, table: LineTable) -> int:
    if by_row:
        return node.start_point.row + 1
    return bisect_right(table.byte_starts, node.start_byte)


def _members_with_forms(
    marks: Marks, nodes: list[Node], src: bytes, by_row: bool, at: _Python
) -> None:
    """`_members`, each call with its receiver's form; the receivers of QUALIFIED and BUILTIN
    calls, and the types of the receivers `at.typer` can type."""
    for node in nodes:
        start, end = node.start_byte, node.end_byte
        after = src[end : end + 1]
        call = after == b"(" or (after in _BLANKS and _called(node, src, end, at.shape))
        raw = src[start:end]
        form = 0
        if not call:
            pass
        elif src[start - 5 : start] == b"self." and src[start - 6 : start - 5] not in _NAME_BYTE:
            form = SELF_FORM  # the most common receiver, read without making a node
        else:
            form, chain = receiver(node, src, at.bound)
            if form in (QUALIFIED_FORM, BUILTIN_FORM):
                name = raw.decode(ENCODING, "replace")
                at.found.quals.append((_line(node, by_row, at.table), name, chain))
            elif form == OTHER_FORM and chain and at.typer is not None:
                kind = at.typer(chain, start)
                if kind:
                    form = TYPED_FORM
                    name = raw.decode(ENCODING, "replace")
                    at.found.typed.append((_line(node, by_row, at.table), name, chain, kind))
        mark = ((node.start_point.row + 1 if by_row else start) << 1 | call) << _FORM_SHIFT | form
        found = marks.get(raw)
        if found is None:
            marks[raw] = [mark]
        else:
            found.append(mark)


def _calls_with_forms(
    marks: Marks,
    nodes: list[Node],
    src: bytes,
    by_row: bool,
    members: ReceiverReader,
    table: LineTable,
    out: Found,
) -> set[int]:
    """Mark the callees, each with the form its receiver gives it (`receivers`)."""
    called: set[int] = set()
    for node in nodes:
        start = node.start_byte
        raw = src[start : node.end_byte]
        called.add(start)
        written = members.classify(node)
        if written.form in (QUALIFIED_FORM, BUILTIN_FORM):
            name = raw.decode(ENCODING, "replace")
            out.quals.append((_line(node, by_row, table), name, written.chain))
        elif written.form == TYPED_FORM:
            name = raw.decode(ENCODING, "replace")
            out.typed.append((_line(node, by_row, table), name, written.chain, written.kind))
        mark = ((node.start_point.row + 1 if by_row else start) << 1 | 1) << _FORM_SHIFT
        marks.setdefault(raw, []).append(mark | written.form)
    return called


def _objects(marks: Marks, nodes: list[Node], src: bytes, by_row: bool, shift: int) -> None:
    """Plain names before a member access, when upper-case: classes, not variables."""
    for node in nodes:
        start = node.start_byte
        if 0x41 <= src[start] <= 0x5A:  # A-Z
            mark = (node.start_point.row + 1 if by_row else start) << (1 + shift)
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
    marks: Marks, starts: list[int], stop: frozenset[bytes], heads: Heads, by_row: bool, shift: int
) -> tuple[dict[str, list[int]], dict[str, bytes]]:
    """Marks turned into sorted distinct site codes by decoded name, and their forms."""
    kept: dict[str, list[int]] = {}
    for raw, found in marks.items():  # once per distinct name
        if len(raw) < _MIN_NAME or raw in stop:
            continue
        codes = found
        if not by_row:
            ranges = heads.get(raw)
            if ranges is not None:
                found = [m for m in found if not in_head(ranges, m >> (1 + shift))]
            # bisect_right(starts, offset) is the offset's 1-based line
            codes = [
                (bisect_right(starts, m >> (1 + shift)) << 1 | (m >> shift & 1)) << shift
                | (m & 7 if shift else 0)
                for m in found
            ]
        name = raw.decode(ENCODING, "replace")
        if not codes or len(name.split()) != 1:  # packed names are space-separated
            continue
        if name in kept:  # two byte strings that decode alike (invalid UTF-8)
            codes = codes + kept[name]
        kept[name] = codes
    if shift:
        out: dict[str, list[int]] = {}
        forms: dict[str, bytes] = {}
        for name, codes in kept.items():
            out[name], forms[name] = _with_forms(codes)
        return out, forms
    return {n: sorted(set(c)) if len(c) > 1 else c for n, c in kept.items()}, {}


def _with_forms(marks: list[int]) -> tuple[list[int], bytes]:
    """Distinct codes of `code << 3 | form index` marks, each with its forms' bits merged."""
    if len(marks) == 1:
        m = marks[0]
        return [m >> _FORM_SHIFT], _ONE_FORM[m & 7]
    marks.sort()
    codes: list[int] = []
    forms = bytearray()
    last = -1
    for m in marks:
        code = m >> _FORM_SHIFT
        if code == last:
            forms[-1] |= FORM_BITS[m & 7]
        else:
            codes.append(code)
            forms.append(FORM_BITS[m & 7])
            last = code
    return codes, bytes(forms)
