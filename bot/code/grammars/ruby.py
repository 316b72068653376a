"""Ruby: modules, classes, methods; `def self.x` is `Owner.x`; `class << self` is looked into."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from tree_sitter import Node

from bot.code.grammars.base import Grammar, text


class RubyGrammar(Grammar):
    kinds: ClassVar[Mapping[str, str]] = {
        "module": "module",
        "class": "class",
        "method": "function",
        "singleton_method": "function",
    }
    transparent = frozenset({"singleton_class", "body_statement"})
    method_parents = frozenset({"class", "module"})

    def name(self, node: Node, src: bytes) -> str:
        own = text(node.child_by_field_name("name"), src)
        if node.type != "singleton_method":
            return own.replace("::", ".")
        owner = node.child_by_field_name("object")
        if owner is None or owner.type == "self":
            return own  # qualified by the enclosing class or module
        return f"{text(owner, src)}.{own}"
