"""Cutting a file into chunks with exact line ranges and qualified symbols.

    chunk_file(path, text, language) -> [Span(start_line, end_line, kind, symbol, header)]

Lines are 1-based and inclusive and index `text.splitlines()`. Every
non-blank line is in at least one span; spans are sorted and only line windows
of one oversized piece overlap each other.

- Code in a tree-sitter language (`bot.code.registry`) is cut along definitions
  with its chunk rules (see `syntax`): kinds function, method, class, struct, interface, enum,
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
from (`bot.code.parse.Parsed`), so other per-file work (the symbol table) needs
no second parse.
"""

from __future__ import annotations

import logging

from bot.code.chunking.assemble import Piece, windows
from bot.code.chunking.budget import DEFAULT_BUDGET, ChunkBudget
from bot.code.chunking.markdown import markdown_spans
from bot.code.chunking.syntax import SyntaxChunker
from bot.code.lines import ENCODING, ENCODING_ERRORS, LineTable
from bot.code.parse import MAX_PARSE_BYTES, Parsed, parse_source
from bot.code.registry import registered
from bot.models import Span

__all__ = [
    "DEFAULT_BUDGET",
    "KINDS",
    "ChunkBudget",
    "analyze_file",
    "chunk_file",
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
    entry = registered(language)
    table = LineTable(text, with_bytes=entry is not None)
    if table.count == 0:
        return [], None
    if language == "markdown":
        return markdown_spans(text, table, budget), None
    if entry is not None:
        src = text.encode(ENCODING, ENCODING_ERRORS)
        if len(src) <= MAX_PARSE_BYTES:
            try:
                parsed = parse_source(src, table, language)
                spans = SyntaxChunker(entry.grammar, src, table, budget).chunk(parsed.root)
                return spans, parsed
            except Exception:  # a chunker bug must not stop an ingest: degrade to windows
                log.warning(
                    "could not chunk %s as %s; using line windows", path, language, exc_info=True
                )
    return windows(Piece(1, table.count, "window"), table, budget), None
