"""JavaScript (with JSX), TypeScript and TSX.

Besides declarations, these count as definitions: `const f = (...) => ...` and
`const f = function ...` (a function named f), `const C = class ...`, class
fields holding arrow functions (methods), and `Foo.prototype.bar = function`
(the method `Foo.bar`). `export` and `declare` wrap a definition;
`export default function () {}` is named "default".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import ClassVar

from tree_sitter import Node

from bot.code.grammars.base import Definition, Grammar, signature, text, wrapped

_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)
_CLASS_VALUES = frozenset({"class"})
_FIELDS = frozenset({"field_definition", "public_field_definition"})


class JavaScriptGrammar(Grammar):
    kinds: ClassVar[Mapping[str, str]] = {
        "function_declaration": "function",
        "generator_function_declaration": "function",
        "class_declaration": "class",
        "abstract_class_declaration": "class",
        "method_definition": "function",
        "interface_declaration": "interface",
        "enum_declaration": "enum",
        "internal_module": "namespace",
        "module": "namespace",
    }
    need_body = frozenset({"function_declaration", "method_definition", "module"})
    attached = frozenset({"comment", "decorator"})
    wrappers: ClassVar[Mapping[str, str]] = {"ambient_declaration": ""}

    def name(self, node: Node, src: bytes) -> str:
        return super().name(node, src).strip("'\"")  # declare module "lib" { ... }

    def special(self, node: Node, src: bytes) -> Definition | None:
        kind = node.type
        if kind == "export_statement":
            return self._export(node, src)
        if kind in ("lexical_declaration", "variable_declaration"):
            return self._variable(node, src)
        if kind in _FIELDS:
            name = node.child_by_field_name("property") or node.child_by_field_name("name")
            return _valued(node, name, node.child_by_field_name("value"), "", src)
        if kind == "expression_statement":
            return self._assignment(node, src)
        return None

    def _export(self, node: Node, src: bytes) -> Definition | None:
        inner = node.child_by_field_name("declaration")
        if inner is not None:
            found = self.definition(inner, src)
            return wrapped(node, found) if found is not None else None
        value = node.child_by_field_name("value")  # export default function () {}
        kind = _value_kind(value)
        if value is None or kind is None:
            return None
        body = value.child_by_field_name("body")
        return Definition(
            node.start_byte, node.end_byte, kind, "default", body, signature(node, body, src)
        )

    def _variable(self, node: Node, src: bytes) -> Definition | None:
        declarators = [c for c in node.named_children if c.type == "variable_declarator"]
        if len(declarators) != 1:
            return None
        one = declarators[0]
        return _valued(
            node, one.child_by_field_name("name"), one.child_by_field_name("value"), "", src
        )

    def _assignment(self, node: Node, src: bytes) -> Definition | None:
        expression = node.named_child(0) if node.named_child_count == 1 else None
        if expression is None or expression.type != "assignment_expression":
            return None
        left = expression.child_by_field_name("left")
        if left is None or left.type not in ("member_expression", "identifier"):
            return None
        name = text(left, src)
        kind = "method" if ".prototype." in name else ""
        found = _valued(node, left, expression.child_by_field_name("right"), kind, src)
        return replace(found, name=name.replace(".prototype.", ".")) if found else None


def _value_kind(value: Node | None) -> str | None:
    if value is None:
        return None
    if value.type in _FUNCTION_VALUES:
        return "function"
    if value.type in _CLASS_VALUES:
        return "class"
    return None


def _valued(
    node: Node, name: Node | None, value: Node | None, kind: str, src: bytes
) -> Definition | None:
    """`name = <function or class>` as a definition spanning `node`; kind "" = by value."""
    value_kind = _value_kind(value)
    if value is None or value_kind is None or name is None:
        return None
    body = value.child_by_field_name("body")
    return Definition(
        node.start_byte,
        node.end_byte,
        kind or value_kind,
        text(name, src),
        body,
        signature(node, body, src),
    )
