"""Tree-sitter languages and parsers for the registered languages, loaded once.

Grammar wheels (`tree-sitter-python`, ...) bundle their parsers, so nothing is
downloaded. `Language` objects are shared; a `Parser` is not thread-safe, so
each thread gets its own.
"""

from __future__ import annotations

import importlib
import threading
from functools import cache

from tree_sitter import Language, Parser

from bot.code.registry import registered

__all__ = ["parser", "ts_language"]

_local = threading.local()


@cache
def ts_language(name: str) -> Language:
    """The tree-sitter Language of a registered language (KeyError otherwise)."""
    entry = registered(name)
    if entry is None:
        raise KeyError(name)
    return Language(getattr(importlib.import_module(entry.wheel), entry.loader)())


def parser(name: str) -> Parser:
    """This thread's parser for `name`."""
    parsers: dict[str, Parser] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    found = parsers.get(name)
    if found is None:
        found = parsers[name] = Parser(ts_language(name))
    return found
