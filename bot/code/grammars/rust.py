"""Rust: items, with methods of `impl Type` and `impl Trait for Type` named `Type.method`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from tree_sitter import Node

from bot.code.grammars.base import Grammar, text, type_name


class RustGrammar(Grammar):
    kinds: ClassVar[Mapping[str, str]] = {
        "function_item": "function",
        "struct_item": "struct",
        "union_item": "struct",
        "enum_item": "enum",
        "trait_item": "trait",
        "impl_item": "impl",
        "mod_item": "module",
        "macro_definition": "macro",
    }
    need_body = frozenset({"function_item", "mod_item"})  # `mod x;` and `fn f();` declare only
    attached = frozenset({"line_comment", "block_comment", "attribute_item"})

    def name(self, node: Node, src: bytes) -> str:
        if node.type == "impl_item":
            return type_name(text(node.child_by_field_name("type"), src))
        return super().name(node, src)
