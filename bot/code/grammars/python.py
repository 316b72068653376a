"""Python: functions, classes, decorators; definitions under top-level if/try/with."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from bot.code.grammars.base import Grammar


class PythonGrammar(Grammar):
    kinds: ClassVar[Mapping[str, str]] = {
        "function_definition": "function",
        "class_definition": "class",
    }
    wrappers: ClassVar[Mapping[str, str]] = {"decorated_definition": "definition"}
    # `if TYPE_CHECKING:`, `try: ... except ImportError:` and friends hold definitions too.
    transparent = frozenset(
        {
            "if_statement",
            "elif_clause",
            "else_clause",
            "try_statement",
            "except_clause",
            "finally_clause",
            "with_statement",
            "block",
        }
    )
