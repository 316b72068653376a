"""Cutting a file into chunks with exact line ranges and qualified symbols.

    chunk_file(path, text, language) -> [Span(start_line, end_line, kind, symbol, header)]

Lines are 1-based and inclusive and index `text.splitlines()`. Every
non-blank line is in at least one span; spans are sorted and only line windows
of one oversized piece overlap each other.

- Code in a tree-sitter language (`SYNTAX_LANGUAGES`) is cut along definitions
  (see `syntax`): kinds function, method, class, struct, interface, enum,
  trait, impl, module, namespace, macro, and "block" for code between them.
  Symbols are qualified with "." (`Outer.Inner.method`, `Cache.Get` for a Go
  receiver, `Matrix.at` for C++ `Matrix::at`). A merged span's symbol lists
  its definitions joined by ", " (see `assemble`).
- Markdown is cut at headings, kind "section", symbol the heading path
  ("Install > Requirements").
- Anything else is cut into overlapping line windows, kind "window".

The header is the enclosing definitions' signature lines plus the span's own
(e.g. "class Session(SessionRedirectMixin):\\ndef send(self, request):"), and
is empty for blocks, sections and windows. `chunk_file` never raises on odd
input: if parsing fails unexpectedly it logs and falls back to windows.

`analyze_file` returns the same spans plus the tree-sitter parse they came
from (`Parsed`), so other per-file work (the symbol table) needs no second parse.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from tree_sitter import Node, Tree

from bot.code.chunking.assemble import Piece, windows
from bot.code.chunking.budget import DEFAULT_BUDGET, ChunkBudget
from bot.code.chunking.grammars import GRAMMARS, parser
from bot.code.chunking.lines import ENCODING, ENCODING_ERRORS, LineTable
from bot.code.chunking.markdown import markdown_spans
from bot.code.chunking.syntax import SyntaxChunker
from bot.models import Span

__all__ = [
    "DEFAULT_BUDGET",
    "KINDS",
    "ChunkBudget",
    "Parsed",
    "analyze_file",
    "chunk_file",
    "parse_file",
]

log = logging.getLogger(__name__)

KINDS = frozenset(
    {
        "function",
        "method",
        "class",
        "struct",
        "interface",
        "enum",
        "trait",
        "impl",
        "module",
        "namespace",
        "macro",
        "block",
        "section",
        "window",
    }
)

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


def chunk_file(
    path: str, text: str, language: str, *, budget: ChunkBudget = DEFAULT_BUDGET
) -> list[Span]:
    """The chunks of one file, in line order; [] for an empty or blank file."""
    return analyze_file(path, text, language, budget=budget)[0]


def analyze_file(
    path: str, text: str, language: str, *, budget: ChunkBudget = DEFAULT_BUDGET
) -> tuple[list[Span], Parsed | None]:
    """`chunk_file`'s spans, and the parse when the file was cut along its syntax tree.

    The parse is None for files that are not parsed (blank, markdown, not a tree-sitter
    language, too big) and when chunking the tree failed.
    """
    if not text or text.isspace():
        return [], None
    grammar = GRAMMARS.get(language)
    table = LineTable(text, with_bytes=grammar is not None)
    if table.count == 0:
        return [], None
    if language == "markdown":
        return markdown_spans(text, table, budget), None
    if grammar is not None:
        src = text.encode(ENCODING, ENCODING_ERRORS)
        if len(src) <= MAX_PARSE_BYTES:
            try:
                tree = parser(language).parse(src)
                spans = SyntaxChunker(grammar, src, table, budget).chunk(tree.root_node)
                return spans, Parsed(tree, src, table, language)
            except Exception:  # a chunker bug must not stop an ingest: degrade to windows
                log.warning(
                    "could not chunk %s as %s; using line windows", path, language, exc_info=True
                )
    return windows(Piece(1, table.count, "window"), table, budget), None


def parse_file(text: str, language: str) -> Parsed | None:
    """The parse `analyze_file` would make, without chunking; None when it would make none."""
    if language not in GRAMMARS or not text or text.isspace():
        return None
    table = LineTable(text, with_bytes=True)
    src = text.encode(ENCODING, ENCODING_ERRORS)
    if table.count == 0 or len(src) > MAX_PARSE_BYTES:
        return None
    return Parsed(parser(language).parse(src), src, table, language)
