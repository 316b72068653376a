"""C and C++: functions, structs, unions, enums, classes, namespaces.

A function's name comes from its declarator (`int *(*f)(void)` -> `f`);
`Matrix::at` defined outside its class is the method `Matrix.at`. Preprocessor
conditionals and `extern "C" { }` are searched in place.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import ClassVar

from tree_sitter import Node

from bot.code.grammars.base import Definition, Grammar, signature, text

_SPECIFIERS = {
    "struct_specifier": "struct",
    "union_specifier": "struct",
    "enum_specifier": "enum",
    "class_specifier": "class",
}
_DECLARATOR_DEPTH = 8
_HOLDERS = frozenset({"type_definition", "declaration", "field_declaration"})
_UNFIELDED = frozenset({"reference_declarator", "parenthesized_declarator"})
_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")


def qualified_name(raw: str) -> str:
    """`ns::Box<T>::get` -> `ns.Box.get`; operator names are kept (`Matrix.operator*`)."""
    head, operator, tail = raw.partition("operator")
    if operator and head and (head[-1].isalnum() or head[-1] == "_"):
        head, operator, tail = raw, "", ""  # "operator" inside an identifier
    previous = None
    while previous != head:
        previous, head = head, _TEMPLATE_ARGS.sub("", head)
    name = "".join(head.split()).replace("::", ".").lstrip(".").lstrip("*&")
    return name + operator + " ".join(tail.split())


class CGrammar(Grammar):
    kinds: ClassVar[Mapping[str, str]] = {"function_definition": "function", **_SPECIFIERS}
    need_body = frozenset({"function_definition", *_SPECIFIERS})  # forward declarations
    transparent = frozenset(
        {
            "preproc_if",
            "preproc_ifdef",
            "preproc_else",
            "preproc_elif",
            "preproc_elifdef",
            "linkage_specification",
            "declaration_list",
        }
    )

    def name(self, node: Node, src: bytes) -> str:
        if node.type != "function_definition":
            return super().name(node, src)
        declarator = node.child_by_field_name("declarator")
        for _ in range(_DECLARATOR_DEPTH):  # pointer, reference and function declarators
            if declarator is None:
                return ""
            inner = declarator.child_by_field_name("declarator")
            if inner is None and declarator.type in _UNFIELDED:  # `&f(...)`, `(*f)(...)`
                inner = declarator.named_child(declarator.named_child_count - 1)
            if inner is None:
                break
            declarator = inner
        return qualified_name(text(declarator, src))

    def special(self, node: Node, src: bytes) -> Definition | None:
        """`typedef struct {...} name_t;`, and `struct S {...};` held in a declaration."""
        if node.type not in _HOLDERS:
            return None
        inner = node.child_by_field_name("type")
        kind = _SPECIFIERS.get(inner.type) if inner is not None else None
        body = inner.child_by_field_name("body") if inner is not None else None
        if inner is None or kind is None or body is None:
            return None
        name = super().name(inner, src)
        if node.type == "type_definition" or not name:
            name = text(node.child_by_field_name("declarator"), src) or name
        return Definition(
            node.start_byte, node.end_byte, kind, name, body, signature(node, body, src)
        )


class CppGrammar(CGrammar):
    kinds: ClassVar[Mapping[str, str]] = {**CGrammar.kinds, "namespace_definition": "namespace"}
    wrappers: ClassVar[Mapping[str, str]] = {"template_declaration": ""}

    def definition(self, node: Node, src: bytes) -> Definition | None:
        found = super().definition(node, src)
        if found is not None and found.kind == "function" and "." in found.name:
            return Definition(
                found.start, found.end, "method", found.name, found.body, found.signature
            )
        return found
