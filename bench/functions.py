"""Which functions a retrieved chunk shows: the scoring side of gold-function hit@k.

SWE-bench names gold functions `path::Class.method`. A system's chunk may be
one method, a window of a long function, or a whole small class, so chunks are
mapped to every function definition whose lines overlap them (qualified like
codecite's symbols, nested defs as `outer.inner`), in line order. Python is
read with `ast`; code `ast` rejects (old Python 2 trees in SWE-bench) falls
back to an indentation scan. Other files use the chunk's own symbol.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

_DEF_LINE = re.compile(r"^(\s*)(?:async\s+)?(def|class)\s+([A-Za-z_]\w*)")


@dataclass(frozen=True, slots=True)
class Definition:
    qualname: str
    start: int  # first line (decorators included)
    end: int


def python_definitions(text: str) -> list[Definition]:
    """Every function and method, qualified by enclosing classes and functions."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return _scan_definitions(text)
    out: list[Definition] = []
    _walk(tree.body, (), out)
    return sorted(out, key=lambda d: (d.start, d.end))


def _walk(body: Iterable[ast.stmt], prefix: tuple[str, ...], out: list[Definition]) -> None:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            name = (*prefix, node.name)
            out.append(Definition(".".join(name), start, node.end_lineno or node.lineno))
            _walk(node.body, name, out)
        elif isinstance(node, ast.ClassDef):
            _walk(node.body, (*prefix, node.name), out)
        else:
            for field in ("body", "orelse", "finalbody", "handlers"):  # defs under if/try
                inner = getattr(node, field, None)
                if isinstance(inner, list):
                    _walk([n for n in inner if isinstance(n, ast.stmt)], prefix, out)


def _scan_definitions(text: str) -> list[Definition]:
    """`def`/`class` lines by indentation; a block ends at its last line indented deeper."""
    opened: list[tuple[int, str, str, int]] = []  # (indent, kind, qualname, start)
    out: list[Definition] = []
    last = 0  # the last non-blank line seen

    def close(indent: int) -> None:
        while opened and opened[-1][0] >= indent:
            _, kind, qual, start = opened.pop()
            if kind == "def":
                out.append(Definition(qual, start, max(start, last)))

    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        close(indent)
        m = _DEF_LINE.match(line)
        if m:
            qual = f"{opened[-1][2]}.{m.group(3)}" if opened else m.group(3)
            opened.append((indent, m.group(2), qual, number))
        last = number
    close(0)
    return sorted(out, key=lambda d: (d.start, d.end))


class FunctionMap:
    """Definitions of the files of one tree, read on first use."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._cache: dict[str, list[Definition]] = {}

    def definitions(self, path: str) -> list[Definition]:
        if path not in self._cache:
            try:
                text = (self._root / path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
            self._cache[path] = python_definitions(text)
        return self._cache[path]

    def functions(self, path: str, start: int, end: int, symbol: str = "") -> list[str]:
        """`path::qualname` of each function overlapping lines start..end."""
        if not path.endswith((".py", ".pyi")):
            return [f"{path}::{s}" for s in symbol.split(", ") if s]
        return [
            f"{path}::{d.qualname}"
            for d in self.definitions(path)
            if d.start <= end and d.end >= start
        ]

    def ranked(self, chunks: Sequence[tuple[str, int, int, str]]) -> list[str]:
        """Distinct functions of (path, start, end, symbol) chunks, best chunk first."""
        seen: dict[str, None] = {}
        for path, start, end, symbol in chunks:
            for f in self.functions(path, start, end, symbol):
                seen.setdefault(f, None)
        return list(seen)
