"""What an excerpt is labelled with: the one definition its lines belong to, and its fence.

A retrieved block may merge several chunks (`A, B, C`); an excerpt of it shows the
lines of one of them. With the symbol table's definitions of the file, the label is
the innermost definition holding the excerpt's middle line; without them, the last of
the block's symbols whose definition starts at or above the excerpt.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.retrieval.dirtree import one_line
from bot.retrieval.retriever import Source
from bot.symbols.model import SymbolDef


def one_definition(block: Source, excerpt: Source, defs: Sequence[SymbolDef] = ()) -> str:
    """The qualified symbol of the definition `excerpt` (cut from `block`) shows; "" if none."""
    middle = (excerpt.start_line + excerpt.end_line) // 2
    holding = [
        d
        for d in defs
        if (d.repo, d.path) == (excerpt.repo, excerpt.path) and d.start_line <= middle <= d.end_line
    ]
    if holding:
        return min(holding, key=lambda d: d.end_line - d.start_line).symbol
    symbols = [s for s in block.symbol.split(", ") if s]
    if len(symbols) <= 1:
        return block.symbol
    above = block.text.split("\n")[: excerpt.start_line - block.start_line + 1]
    found = ""
    for symbol in symbols:
        name = re.escape(symbol.rsplit(".", 1)[-1])
        pattern = re.compile(rf"(?:\b(?:def|func|function|fn|class|struct|type)\s+|\)\s*){name}\b")
        if any(pattern.search(line) for line in above):
            found = symbol
    return found or symbols[0]


def fence_lang(language: str) -> str:
    """The code fence's language tag for an indexed language name."""
    return {"csharp": "cs", "text": "", "markdown": "md"}.get(language, language)


def excerpt_block(label: str, symbol: str, excerpt: Source) -> str:
    """An excerpt as answers show it: its bold citation label, the definition it belongs
    to (left out when it belongs to none: a docstring, a module's top) and its repository,
    then its lines fenced."""
    what = f" `{one_line(symbol)}`" if symbol else ""
    fence = "````" if "```" in excerpt.text else "```"
    return (
        f"**{label}**{what} ({excerpt.repo})\n"
        f"{fence}{fence_lang(excerpt.language)}\n{excerpt.text}\n{fence}"
    )
