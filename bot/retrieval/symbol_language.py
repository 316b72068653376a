"""The language of a file a symbol answer reads, for the resolvers' language rules.

`bot.code.languages` is imported on first use rather than above: its registry loads the
tree-sitter grammars, which a search that resolves no name must not pay for
(`codecite search` starts without them: tests/adapters/cli/test_startup.py)."""

from __future__ import annotations


def language_of(path: str) -> str:
    """`path`'s language ("python", "go", ...); "" for a file of no language."""
    from bot.code.languages import language_for

    return language_for(path) or ""
