"""Definitions and references of one parsed file, for the symbol table.

One tree-sitter query per language (`bot.code.queries`) runs over the file in C and
captures candidate definitions and the names in reference positions; Python
then only looks at what was captured: `definitions` decides the definitions
(as the chunker would), `references` reads the names, their lines and calls.

Extraction never raises: on a failure it logs and keeps what it found.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from tree_sitter import Node, QueryCursor

from bot.code.chunking import analyze_file
from bot.code.lines import LineTable
from bot.code.parse import Parsed, parse_file
from bot.code.queries import symbol_query
from bot.code.registry import registered
from bot.models import Span
from bot.symbols.bindings import Bindings, read_bindings, read_results
from bot.symbols.definitions import Definitions
from bot.symbols.exports import Found as Aliases
from bot.symbols.exports import python_reexports, read_exports
from bot.symbols.imports import read_imports as read_other_imports
from bot.symbols.links import Binding, FileLinks, dotted
from bot.symbols.loops import read_loops
from bot.symbols.model import FileSymbols
from bot.symbols.packed import EMPTY, AliasRow, PackedSymbols
from bot.symbols.python_links import read_imports
from bot.symbols.receivers import ReceiverReader
from bot.symbols.references import READERS, Found, references

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
    found = Definitions(entry.grammar, src, table, keep_heads=reader.own_names, language=language)
    try:
        found.add_all(captures.get("def", []))
    except Exception:
        log.warning("definitions of a %s file stopped early", language, exc_info=True)
    facts = _facts(captures, src, table, found, language)
    bound = frozenset(n.encode() for n in facts.bound)
    members = ReceiverReader(language, src, facts.bound, facts.bindings, found.owner_of)

    def typer(chain: str, at: int) -> str:
        if not facts.bindings.may_type(chain):
            return ""
        return facts.bindings.receiver_type(found.owner_of(at), chain)

    try:
        refs = references(
            captures, src, table, reader, found.heads, bound, members=members, typer=typer
        )
    except Exception:
        log.warning("references of a %s file were not read", language, exc_info=True)
        refs = Found({}, {}, [])
    fields, results, lists = facts.bindings.facts()
    links = FileLinks(
        tuple(facts.imports),
        facts.bases,
        tuple(sorted(set(refs.quals))),
        tuple(sorted(set(refs.typed))),
        fields,
        results,
        lists,
        facts.bindings.exported,
        _package(captures, src),
    )
    return PackedSymbols.from_sites(
        found.defs,
        refs.sites,
        distinct=True,
        forms=refs.forms or None,
        links=links,
        aliases=facts.aliases,
    )


@dataclass(slots=True)
class _Facts:
    """What a file says about its names besides definitions and references."""

    imports: list[Binding]
    bases: tuple[tuple[str, tuple[str, ...]], ...]
    bindings: Bindings
    aliases: list[AliasRow]
    bound: frozenset[str]  # what its imports and top-level definitions bind


def _facts(
    captures: dict[str, list[Node]], src: bytes, table: LineTable, found: Definitions, language: str
) -> _Facts:
    imports, bases = _links(captures, src, found, language)
    bound = _bound(imports, found)
    bindings = Bindings({symbol: kind for _, symbol, kind, _, _ in found.defs})
    aliases = Aliases(table.line_of_byte)
    try:
        read_bindings(language, captures.get("bind", []), src, found.owner_of, bindings)
        read_results(language, captures.get("def", []), src, found.owner_of, bindings)
        read_exports(
            language, captures.get("export", []), src, bound, aliases, bindings, found.owner_of
        )
        read_loops(language, captures.get("loop", []), src, aliases, bindings, found.owner_of)
        if language == "python":
            # In source order: a query's captures may come in another order in another process.
            imports_in_order = sorted(captures.get("import", []), key=lambda n: n.start_byte)
            python_reexports(aliases, imports_in_order, src)
    except Exception:  # odd trees must not stop an ingest
        log.warning("types or aliases of a %s file were not read", language, exc_info=True)
    return _Facts(imports, bases, bindings, aliases.distinct(), bound)


def _links(
    captures: dict[str, list[Node]], src: bytes, found: Definitions, language: str
) -> tuple[list[Binding], tuple[tuple[str, tuple[str, ...]], ...]]:
    """The file's imports and each class's bases, as written."""
    try:
        statements = sorted(captures.get("import", []), key=lambda n: n.start_byte)
        if language == "python":
            imports = read_imports(statements, src)
        else:
            imports = read_other_imports(language, statements, src)
        bases: dict[str, list[str]] = {}
        for node in sorted(captures.get("base", []), key=lambda n: n.start_byte):
            owner = found.owner_of(node.start_byte)
            base = dotted(src[node.start_byte : node.end_byte].decode("utf-8", "replace"))
            if owner and base and base not in bases.get(owner, ()):
                bases.setdefault(owner, []).append(base)
    except Exception:  # odd trees must not stop an ingest
        log.warning("imports or bases of a %s file were not read", language, exc_info=True)
        return [], ()
    return imports, tuple((owner, tuple(names)) for owner, names in bases.items())


def _package(captures: dict[str, list[Node]], src: bytes) -> str:
    """A Go file's package name (`package chi`)."""
    found = captures.get("package", [])
    return src[found[0].start_byte : found[0].end_byte].decode("utf-8", "replace") if found else ""


def _bound(imports: list[Binding], found: Definitions) -> frozenset[str]:
    """Names an import or a top-level definition binds: a call on one is QUALIFIED."""
    names = {b.local for b in imports if b.local != "*"}
    names.update(symbol for _, symbol, _, _, _ in found.defs if "." not in symbol)
    return frozenset(names)
