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
"""

from __future__ import annotations

import logging

from bot.ingest.chunking.assemble import Piece, windows
from bot.ingest.chunking.budget import DEFAULT_BUDGET, ChunkBudget
from bot.ingest.chunking.grammars import GRAMMARS, parser
from bot.ingest.chunking.lines import ENCODING, ENCODING_ERRORS, LineTable
from bot.ingest.chunking.markdown import markdown_spans
from bot.ingest.chunking.syntax import SyntaxChunker
from bot.models import Span

__all__ = ["DEFAULT_BUDGET", "KINDS", "ChunkBudget", "chunk_file"]

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


def chunk_file(
    path: str, text: str, language: str, *, budget: ChunkBudget = DEFAULT_BUDGET
) -> list[Span]:
    """The chunks of one file, in line order; [] for an empty or blank file."""
    if not text or text.isspace():
        return []
    grammar = GRAMMARS.get(language)
    table = LineTable(text, with_bytes=grammar is not None)
    if table.count == 0:
        return []
    if language == "markdown":
        return markdown_spans(text, table, budget)
    if grammar is not None:
        src = text.encode(ENCODING, ENCODING_ERRORS)
        if len(src) <= MAX_PARSE_BYTES:
            try:
                tree = parser(language).parse(src)
                return SyntaxChunker(grammar, src, table, budget).chunk(tree.root_node)
            except Exception:  # a chunker bug must not stop an ingest: degrade to windows
                log.warning(
                    "could not chunk %s as %s; using line windows", path, language, exc_info=True
                )
    return windows(Piece(1, table.count, "window"), table, budget)
