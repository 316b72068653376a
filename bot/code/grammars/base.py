"""What a definition is in one tree-sitter grammar: tables plus a few hooks.

A `Grammar` maps node types to chunk kinds and says where names, bodies and
nested definitions are. Most languages only fill the tables; odd shapes (Go
receivers, Rust impls, C declarators, JS arrow functions) override `special`
or `name`. Kinds used here: function, method, class, struct, interface, enum,
trait, impl, module, namespace, macro. A "function" directly inside a
class-like definition (`method_parents`) is reported as a "method".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

from tree_sitter import Node

from bot.code.lines import ENCODING

SIGNATURE_MAX = 200
_SIGNATURE_SCAN = 1000  # bytes of a definition's start looked at for its signature
_GENERICS = re.compile(r"<[^<>]*>|\[[^\[\]]*\]")


@dataclass(frozen=True, slots=True)
class Definition:
    """One definition found in a syntax tree (byte offsets into the source)."""

    start: int  # wrappers (decorators, export, template<...>) included
    end: int
    kind: str
    name: str  # relative to the enclosing definition; may be dotted ("Cache.Get")
    body: Node | None  # nested definitions are looked for among its children
    signature: str  # one line, whitespace collapsed


def text(node: Node | None, src: bytes) -> str:
    if node is None:
        return ""
    return src[node.start_byte : node.end_byte].decode(ENCODING, "replace")


def signature(node: Node, body: Node | None, src: bytes, *, until: int = -1) -> str:
    """The definition's opening: from its start to its body (or `until`), else its first line."""
    start = node.start_byte
    stop = min(node.end_byte, start + _SIGNATURE_SCAN)
    if until > start:
        stop = min(stop, until)
    elif body is not None and start < body.start_byte:
        stop = min(stop, body.start_byte)
    else:
        newline = src.find(b"\n", start, stop)
        stop = stop if newline < 0 else newline
    line = " ".join(src[start:stop].decode(ENCODING, "replace").split())
    return line if len(line) <= SIGNATURE_MAX else line[: SIGNATURE_MAX - 1] + "…"


def type_name(raw: str) -> str:
    """`&'a mut Stack<T>` -> `Stack`, `*Cache[K, V]` -> `Cache`, `fmt::Display` -> `fmt.Display`."""
    previous = None
    while previous != raw:  # nested generics, innermost first
        previous, raw = raw, _GENERICS.sub("", raw)
    words = [w for w in raw.replace("&", " ").replace("*", " ").split() if not w.startswith("'")]
    words = [w for w in words if w not in ("mut", "const", "dyn", "impl")]
    return words[-1].replace("::", ".").strip(".") if words else ""


def qualify(parent: str, name: str) -> str:
    """`Outer` + `method` -> `Outer.method`; `Config` + `Config.reset` stays `Config.reset`."""
    if not parent or not name:
        return parent or name
    owner, dot, _ = name.partition(".")
    if dot and parent.rpartition(".")[2] == owner:
        return f"{parent.rpartition('.')[0]}.{name}".lstrip(".")
    return f"{parent}.{name}"


def wrapped(outer: Node, inner: Definition) -> Definition:
    """`inner` widened to the wrapper's range (decorators, `export`, `template <...>`)."""
    return replace(
        inner, start=min(outer.start_byte, inner.start), end=max(outer.end_byte, inner.end)
    )


class Grammar:
    """Table-driven definition finder; subclasses fill the tables and override hooks."""

    kinds: ClassVar[Mapping[str, str]] = {}
    need_body: ClassVar[frozenset[str]] = frozenset()  # node types that count only with a body
    attached: ClassVar[frozenset[str]] = frozenset({"comment"})  # glued to the next definition
    transparent: ClassVar[frozenset[str]] = frozenset()  # searched for definitions in place
    wrappers: ClassVar[Mapping[str, str]] = {}  # node type -> field holding the definition
    method_parents: ClassVar[frozenset[str]] = frozenset(
        {"class", "struct", "interface", "enum", "trait", "impl"}
    )
    name_field: ClassVar[str] = "name"
    body_field: ClassVar[str] = "body"

    def definition(self, node: Node, src: bytes) -> Definition | None:
        kind = self.kinds.get(node.type)
        if kind is None:
            return (
                self._wrapped(node, src) if node.type in self.wrappers else self.special(node, src)
            )
        body = self.body(node)
        if body is None and node.type in self.need_body:
            return None
        return Definition(
            node.start_byte,
            node.end_byte,
            kind,
            self.name(node, src),
            body,
            signature(node, body, src),
        )

    def _wrapped(self, node: Node, src: bytes) -> Definition | None:
        field = self.wrappers[node.type]
        inner = node.child_by_field_name(field) if field else _last_named(node)
        if inner is None:
            return None
        found = self.definition(inner, src)
        return wrapped(node, found) if found is not None else None

    def special(self, node: Node, src: bytes) -> Definition | None:
        """Definitions that the tables cannot describe; none by default."""
        return None

    def name(self, node: Node, src: bytes) -> str:
        return text(node.child_by_field_name(self.name_field), src)

    def body(self, node: Node) -> Node | None:
        return node.child_by_field_name(self.body_field)

    def members(self, body: Node) -> Sequence[Node]:
        """The nodes in a body that may be (or hold) nested definitions."""
        return body.named_children

    def is_transparent(self, node: Node) -> bool:
        return node.type in self.transparent or node.is_error


def _last_named(node: Node) -> Node | None:
    count = node.named_child_count
    return node.named_child(count - 1) if count else None
