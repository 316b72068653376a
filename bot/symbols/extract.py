"""Definitions and references of one parsed file, for the symbol table.

One tree-sitter query per language (`bot.code.queries`) runs over the file in C and
captures candidate definitions and the names in reference positions; Python
then only looks at what was captured: `definitions` decides the definitions
(as the chunker would), `references` reads the names, their lines and calls.

Extraction never raises: on a failure it logs and keeps what it found.
"""

from __future__ import annotations

import logging

from tree_sitter import Node, QueryCursor

from bot.code.chunking import analyze_file
from bot.code.lines import LineTable
from bot.code.parse import Parsed, parse_file
from bot.code.queries import symbol_query
from bot.code.registry import registered
from bot.models import Span
from bot.symbols.definitions import Definitions
from bot.symbols.model import FileSymbols
from bot.symbols.packed import EMPTY, PackedSymbols
from bot.symbols.references import READERS, references

__all__ = ["analyze", "extract", "extract_packed", "extract_parsed", "extract_text"]

log = logging.getLogger(__name__)


def extract(root: Node, src: bytes, table: LineTable, language: str) -> FileSymbols:
    """Every definition and reference of a file parsed as `language` from `src`.

    `table` must have been built with byte offsets from the text `src` encodes.
    """
    return extract_packed(root, src, table, language).to_file_symbols()


def analyze(
    path: str, text: str, language: str, *, symbols: bool = True
) -> tuple[list[Span], PackedSymbols]:
    """A file's chunk spans (`chunk_file`'s) and, from the same parse, its symbols.

    A pure function of its arguments with picklable results, so it can run in a
    worker process. Files that are not parsed have no symbols; so does every file
    when `symbols` is False.
    """
    spans, parsed = analyze_file(path, text, language)
    if not symbols or parsed is None:
        return spans, EMPTY
    return spans, extract_parsed(parsed)


def extract_parsed(parsed: Parsed) -> PackedSymbols:
    return extract_packed(parsed.root, parsed.src, parsed.table, parsed.language)


def extract_text(path: str, text: str, language: str) -> PackedSymbols:
    """Parse and extract, for a file that needs no chunking."""
    try:
        parsed = parse_file(text, language)
    except Exception:  # a parser failure must not stop an ingest
        log.warning("could not parse %s as %s for symbols", path, language, exc_info=True)
        return EMPTY
    return EMPTY if parsed is None else extract_parsed(parsed)


def extract_packed(root: Node, src: bytes, table: LineTable, language: str) -> PackedSymbols:
    """`extract` in the compact form ingest keeps (see `packed`)."""
    entry = registered(language)
    reader = READERS.get(language)
    if entry is None or reader is None:
        return EMPTY
    try:
        captures = QueryCursor(symbol_query(language)).captures(root)
    except Exception:  # odd trees must not stop an ingest
        log.warning("could not query a %s file for symbols", language, exc_info=True)
        return EMPTY
    found = Definitions(entry.grammar, src, table, keep_heads=reader.own_names)
    try:
        found.add_all(captures.get("def", []))
    except Exception:
        log.warning("definitions of a %s file stopped early", language, exc_info=True)
    try:
        sites = references(captures, src, table, reader, found.heads)
    except Exception:
        log.warning("references of a %s file were not read", language, exc_info=True)
        sites = {}
    return PackedSymbols.from_sites(found.defs, sites, distinct=True)
