"""Reading types and names off syntax nodes: declared types, the types values give, lists.

    stated_type("*Mux") -> "Mux"; stated_type("Optional[Foo]") -> "Foo"
    value_type(`new Foo()`) -> "Foo"; value_type(`NewMux()`) -> "NewMux()"
    listed_names(`['get', 'post'] as const`) -> ("get", "post")

Shared by the readers of declarations (`bindings`), imports and aliases (`exports`).
"""

from __future__ import annotations

import re

from tree_sitter import Node

from bot.code.grammars.base import type_name
from bot.code.lines import ENCODING
from bot.symbols.links import dotted

_PLAIN = re.compile(r"[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*")
_NULLS = frozenset({"None", "null", "undefined", "nil", "void"})
_OPTIONAL = re.compile(r"^(?:typing\.|t\.)?Optional\[(.*)\]$")
_LIST_ITEM = re.compile(r"^[A-Za-z_$][\w$-]*$")
_MAX_LISTED = 64  # names kept of one list constant


def text(node: Node | None, src: bytes) -> str:
    if node is None:
        return ""
    return src[node.start_byte : node.end_byte].decode(ENCODING, "replace")


def first_named(node: Node | None) -> Node | None:
    """A node's first named child, None when it has none (tree-sitter raises instead)."""
    return node.named_child(0) if node is not None and node.named_child_count else None


def last_named(node: Node | None) -> Node | None:
    count = node.named_child_count if node is not None else 0
    return node.named_child(count - 1) if node is not None and count else None


def stated_type(raw: str) -> str:
    """A declared type as a dotted name: `*Mux` -> Mux, `Optional[Foo]` -> Foo, `"Bar"` ->
    Bar, `Foo | undefined` -> Foo, `&'a mut Stack<T>` -> Stack; "" when it names none."""
    if _PLAIN.fullmatch(raw):  # most types: `Foo`, `http.Request` (no work below)
        return raw if raw not in _NULLS else ""
    raw = raw.strip().lstrip(":").strip().strip("\"'")
    optional = _OPTIONAL.match(raw)
    if optional:
        raw = optional.group(1)
    members = [m.strip() for m in _split_union(raw)]
    members = [m for m in members if m and m not in _NULLS]
    if len(members) != 1:
        return ""
    return dotted(type_name(members[0].strip("\"'")))


def _split_union(raw: str) -> list[str]:
    """`A | B[C | D]` -> [`A`, `B[C | D]`]: the top-level members of a union."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(raw):
        if ch in "[<(":
            depth += 1
        elif ch in "]>)":
            depth -= 1
        elif ch == "|" and depth == 0:
            parts.append(raw[start:i])
            start = i + 1
    parts.append(raw[start:])
    return parts


def listed_names(node: Node | None, src: bytes) -> tuple[str, ...] | None:
    """The names an array/list/tuple literal of strings holds (`['get', 'post'] as const`)."""
    while node is not None and node.type in ("as_expression", "satisfies_expression", "call"):
        node = first_named(node)  # TypeScript's `as const`, Ruby's `%w[...].freeze`
    if node is None or node.type not in ("array", "list", "tuple", "set", "string_array"):
        return None
    names = []
    for item in node.named_children:
        if item.type == "comment":
            continue
        if item.type not in ("string", "bare_string"):
            return None
        name = text(item, src).strip("\"'`")
        if not _LIST_ITEM.match(name):
            return None
        names.append(name)
    return tuple(names[:_MAX_LISTED]) if names else None


# -- values: the type a value gives the variable it is assigned to ---------------------------

_CALLS = frozenset({"call_expression", "call"})
_NOT_CONSTRUCTORS = frozenset({"require", "import"})  # modules: `bot.symbols.imports`
_NEW = {"new_expression": "constructor", "object_creation_expression": "type"}
_LITERALS = {"composite_literal": "type", "struct_expression": "name"}


def value_type(node: Node | None, src: bytes) -> str:
    """The type expression a value states: `new Foo()`, `Foo{}`, `&Foo{}`, `Foo::new()` and
    `NewFoo()` (what the call returns), `x as Foo`; "" for anything else."""
    if node is None:
        return ""
    kind = node.type
    if kind in _NEW:
        return stated_type(text(node.child_by_field_name(_NEW[kind]), src))
    if kind in _LITERALS:
        return stated_type(text(node.child_by_field_name(_LITERALS[kind]), src))
    if kind == "unary_expression" and text(node.child_by_field_name("operator"), src) == "&":
        return value_type(node.child_by_field_name("operand"), src)
    if kind in ("as_expression", "type_assertion_expression"):
        return stated_type(text(last_named(node), src))
    if kind in _CALLS:
        callee = dotted(text(node.child_by_field_name("function"), src))
        return f"{callee}()" if callee and callee not in _NOT_CONSTRUCTORS else ""
    if kind == "method_invocation":  # Java: `Foo.create()`, `create()`
        owner, name = node.child_by_field_name("object"), node.child_by_field_name("name")
        callee = dotted(".".join(t for t in (text(owner, src), text(name, src)) if t))
        return f"{callee}()" if callee else ""
    return ""
