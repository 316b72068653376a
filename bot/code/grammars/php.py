"""PHP: namespaces with bodies, classes, interfaces, traits, enums, functions, methods."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from tree_sitter import Node

from bot.code.grammars.base import Grammar, text


class PhpGrammar(Grammar):
    kinds: ClassVar[Mapping[str, str]] = {
        "namespace_definition": "namespace",
        "class_declaration": "class",
        "interface_declaration": "interface",
        "trait_declaration": "trait",
        "enum_declaration": "enum",
        "function_definition": "function",
        "method_declaration": "function",
    }
    # `namespace App;` (no body) only names what follows; abstract methods have no body.
    need_body = frozenset({"namespace_definition", "function_definition", "method_declaration"})

    def name(self, node: Node, src: bytes) -> str:
        return text(node.child_by_field_name("name"), src).replace("\\", ".")
