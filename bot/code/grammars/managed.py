"""Java and C#: types, members, nested types and (C#) local functions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from tree_sitter import Node

from bot.code.grammars.base import Grammar, text

_METHODS = ("method_declaration", "constructor_declaration")


class JavaGrammar(Grammar):
    kinds: ClassVar[Mapping[str, str]] = {
        "class_declaration": "class",
        "record_declaration": "class",
        "interface_declaration": "interface",
        "annotation_type_declaration": "interface",
        "enum_declaration": "enum",
        "method_declaration": "function",
        "constructor_declaration": "function",
        "compact_constructor_declaration": "function",
    }
    need_body = frozenset(_METHODS)  # abstract and interface methods stay in their type's head
    attached = frozenset({"line_comment", "block_comment"})
    transparent = frozenset({"enum_body_declarations"})


class CSharpGrammar(Grammar):
    kinds: ClassVar[Mapping[str, str]] = {
        "class_declaration": "class",
        "record_declaration": "class",
        "struct_declaration": "struct",
        "record_struct_declaration": "struct",
        "interface_declaration": "interface",
        "enum_declaration": "enum",
        "namespace_declaration": "namespace",
        "method_declaration": "function",
        "constructor_declaration": "function",
        "destructor_declaration": "function",
        "operator_declaration": "function",
        "conversion_operator_declaration": "function",
        "local_function_statement": "function",
    }
    need_body = frozenset(
        {
            *_METHODS,
            "destructor_declaration",
            "operator_declaration",
            "conversion_operator_declaration",
            "local_function_statement",
        }
    )
    transparent = frozenset({"preproc_if", "preproc_region"})

    def name(self, node: Node, src: bytes) -> str:
        if node.type == "destructor_declaration":
            return "~" + super().name(node, src)
        if node.type in ("operator_declaration", "conversion_operator_declaration"):
            head = text(node, src)[:200]
            at = head.find("operator")
            return " ".join(head[at : head.find("(", at)].split()) if at >= 0 else "operator"
        return super().name(node, src)
