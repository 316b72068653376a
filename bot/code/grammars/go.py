"""Go: functions, methods (named `Receiver.Method`), struct and interface types."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from tree_sitter import Node

from bot.code.grammars.base import Definition, Grammar, signature, text, type_name

_TYPE_KINDS = {"struct_type": "struct", "interface_type": "interface"}


class GoGrammar(Grammar):
    kinds: ClassVar[Mapping[str, str]] = {
        "function_declaration": "function",
        "method_declaration": "method",
    }
    need_body = frozenset({"function_declaration", "method_declaration"})
    transparent = frozenset({"type_declaration"})  # only reached when it groups several types

    def name(self, node: Node, src: bytes) -> str:
        own = text(node.child_by_field_name("name"), src)
        receiver = node.child_by_field_name("receiver")
        if receiver is None:
            return own
        for parameter in receiver.named_children:
            owner = type_name(text(parameter.child_by_field_name("type"), src))
            if owner:
                return f"{owner}.{own}"
        return own

    def special(self, node: Node, src: bytes) -> Definition | None:
        if node.type == "type_declaration":
            specs = [c for c in node.named_children if c.type == "type_spec"]
            return _type_spec(specs[0], node, src) if len(specs) == 1 else None
        if node.type == "type_spec":
            return _type_spec(node, node, src)
        return None

    def members(self, body: Node) -> Sequence[Node]:
        return ()  # Go has no nested named functions; big ones become windows


def _type_spec(spec: Node, outer: Node, src: bytes) -> Definition | None:
    value = spec.child_by_field_name("type")
    kind = _TYPE_KINDS.get(value.type) if value is not None else None
    if kind is None or value is None:
        return None
    return Definition(
        outer.start_byte,
        outer.end_byte,
        kind,
        text(spec.child_by_field_name("name"), src),
        value,
        signature(outer, value, src, until=src.find(b"{", value.start_byte, value.end_byte)),
    )
