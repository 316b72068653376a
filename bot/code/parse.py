"""One parse of a file, shared by everything that reads its syntax tree.

Chunking (`bot.code.chunking.analyze_file`) returns the parse it cut along, so
the symbol table (`bot.symbols.extract`) reads the same tree; `parse_file`
makes that parse for a file that needs no chunking.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node, Tree

from bot.code.lines import ENCODING, ENCODING_ERRORS, LineTable
from bot.code.parsers import parser
from bot.code.registry import registered

__all__ = ["MAX_PARSE_BYTES", "Parsed", "parse_file", "parse_source"]

# Larger sources are not parsed (generated or vendored code); they get line windows.
MAX_PARSE_BYTES = 4_000_000


@dataclass(frozen=True, slots=True)
class Parsed:
    """A file as tree-sitter parsed it: the tree, the bytes it indexes and their lines."""

    tree: Tree
    src: bytes  # the text encoded with ENCODING / ENCODING_ERRORS
    table: LineTable  # with byte offsets
    language: str

    @property
    def root(self) -> Node:
        return self.tree.root_node


def parse_source(src: bytes, table: LineTable, language: str) -> Parsed:
    """Parse `src` (a registered language's text, encoded; `table` with byte offsets)."""
    return Parsed(parser(language).parse(src), src, table, language)


def parse_file(text: str, language: str) -> Parsed | None:
    """The parse `analyze_file` would make, without chunking; None when it would make none."""
    if registered(language) is None or not text or text.isspace():
        return None
    table = LineTable(text, with_bytes=True)
    src = text.encode(ENCODING, ENCODING_ERRORS)
    if table.count == 0 or len(src) > MAX_PARSE_BYTES:
        return None
    return parse_source(src, table, language)
