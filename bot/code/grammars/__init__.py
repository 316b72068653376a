"""Chunk rules per tree-sitter grammar: what a definition is, its name, body and members.

One `Grammar` subclass per language family (`base.Grammar` describes the
hooks). Which language uses which rules, and with which grammar wheel, is said
once, in `bot.code.registry`.
"""

from __future__ import annotations

from bot.code.grammars.base import Grammar
from bot.code.grammars.cfamily import CGrammar, CppGrammar
from bot.code.grammars.go import GoGrammar
from bot.code.grammars.javascript import JavaScriptGrammar
from bot.code.grammars.managed import CSharpGrammar, JavaGrammar
from bot.code.grammars.php import PhpGrammar
from bot.code.grammars.python import PythonGrammar
from bot.code.grammars.ruby import RubyGrammar
from bot.code.grammars.rust import RustGrammar

__all__ = [
    "CGrammar",
    "CSharpGrammar",
    "CppGrammar",
    "GoGrammar",
    "Grammar",
    "JavaGrammar",
    "JavaScriptGrammar",
    "PhpGrammar",
    "PythonGrammar",
    "RubyGrammar",
    "RustGrammar",
]
