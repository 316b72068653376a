"""The tree-sitter grammars codecite chunks along definitions, and cached parsers.

Grammar wheels (`tree-sitter-python`, ...) bundle their parsers, so nothing is
downloaded. `Language` objects are shared; a `Parser` is not thread-safe, so
each thread gets its own.
"""

from __future__ import annotations

import importlib
import threading
from functools import cache

from tree_sitter import Language, Parser

from bot.code.chunking.grammar import Grammar
from bot.code.chunking.grammars.cfamily import CGrammar, CppGrammar
from bot.code.chunking.grammars.go import GoGrammar
from bot.code.chunking.grammars.javascript import JavaScriptGrammar
from bot.code.chunking.grammars.managed import CSharpGrammar, JavaGrammar
from bot.code.chunking.grammars.php import PhpGrammar
from bot.code.chunking.grammars.python import PythonGrammar
from bot.code.chunking.grammars.ruby import RubyGrammar
from bot.code.chunking.grammars.rust import RustGrammar

__all__ = ["GRAMMARS", "language", "parser"]

# language name -> (grammar, wheel module, function returning the language pointer)
_SOURCES: dict[str, tuple[Grammar, str, str]] = {
    "python": (PythonGrammar(), "tree_sitter_python", "language"),
    "javascript": (JavaScriptGrammar(), "tree_sitter_javascript", "language"),
    "typescript": (JavaScriptGrammar(), "tree_sitter_typescript", "language_typescript"),
    "tsx": (JavaScriptGrammar(), "tree_sitter_typescript", "language_tsx"),
    "go": (GoGrammar(), "tree_sitter_go", "language"),
    "java": (JavaGrammar(), "tree_sitter_java", "language"),
    "rust": (RustGrammar(), "tree_sitter_rust", "language"),
    "c": (CGrammar(), "tree_sitter_c", "language"),
    "cpp": (CppGrammar(), "tree_sitter_cpp", "language"),
    "csharp": (CSharpGrammar(), "tree_sitter_c_sharp", "language"),
    "ruby": (RubyGrammar(), "tree_sitter_ruby", "language"),
    "php": (PhpGrammar(), "tree_sitter_php", "language_php"),
}

GRAMMARS: dict[str, Grammar] = {name: source[0] for name, source in _SOURCES.items()}

_local = threading.local()


@cache
def language(name: str) -> Language:
    """The tree-sitter Language for one of GRAMMARS' names (KeyError otherwise)."""
    _, module, function = _SOURCES[name]
    return Language(getattr(importlib.import_module(module), function)())


def parser(name: str) -> Parser:
    """This thread's parser for `name`."""
    parsers: dict[str, Parser] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    found = parsers.get(name)
    if found is None:
        found = parsers[name] = Parser(language(name))
    return found
