"""What the symbol table looks for in a syntax tree: one tree-sitter query per language.

Each registered language (`bot.code.registry`) has a query file here,
`<name>.scm`, packaged with the code and read with `importlib.resources`. It
holds one pattern per line; lines starting with `;` are comments and blank
lines separate groups. A query, run once over a file in C, captures:

- `@def`: nodes that may be definitions, which the language's chunk rules then
  decide on (`Grammar.definition`): the node types of its tables (`kinds`,
  `wrappers`) plus the shapes its `special` hook accepts (`const f = () =>
  ...`, `typedef struct {...} t;`), written loosely: the rules have the last
  word, so a pattern may only ever match more.
- `@call`: the name at a call site: the callee of `f(...)`, the member of
  `obj.f(...)`, the type of `new T(...)`, a Rust macro, a JSX element. Only
  the last segment of a dotted or member access is called (`self.send()`
  calls `send`).
- `@ref`: a name used, not called. Where a node is captured both ways the
  call wins.
- `@member` (Python): an attribute name; it is a call when `(` follows it
  (read from the source, and from the tree when only blanks, comments or a
  line break come between). One capture instead of two for most names.
- `@object`: a plain name before a member access (`Session.create`); kept
  only when it starts with an upper-case letter: a class, an enum, a
  constant namespace, not a variable.
- `@base`: a base class, interface or embedded type as written in a
  definition's head (`class Flask(App)`, `extends Base<T>`, a Go struct's
  embedded field); it belongs to the innermost definition around it.
- `@import` (Python): an import statement, read by `bot.symbols.python_links`.
Captures whose name starts with `_` are helpers.

A variable or a parameter is never a reference on its own: writing it (`text =
...`, `def f(text)`) or reading it (`return text`) is not recorded. Such names
are most of a file's identifiers, cost most of the work, and would make a
function `text` look used by every file with a variable `text`. Each file's
header says which names its language records.

A line naming a node type or field that the installed grammar version does not
have is left out of its query (a bracketed list of node types keeps the types it
knows), so an older or newer grammar wheel still gets every pattern it can read.
"""

from __future__ import annotations

import logging
import re
from functools import cache
from importlib import resources

from tree_sitter import Language, Query, QueryError

from bot.code.parsers import ts_language
from bot.code.registry import registered

__all__ = ["build_query", "query_text", "symbol_query"]

log = logging.getLogger(__name__)

# A line that is only a bracketed list of node types with one capture: `[(a) (b)] @def`.
_TYPE_LIST = re.compile(r"\[((?:\s*\(\w+\))+)\s*\]\s*(@\w+)")


def query_text(name: str) -> str:
    """The patterns of a registered language's query file, one a line, comments left out."""
    entry = registered(name)
    if entry is None:
        raise KeyError(name)
    text = resources.files(__name__).joinpath(entry.query_file).read_text(encoding="utf-8")
    lines = (line.strip() for line in text.splitlines())
    return "\n".join(line for line in lines if line and not line.startswith(";"))


@cache
def symbol_query(name: str) -> Query:
    """The compiled query of a registered language (KeyError otherwise)."""
    return build_query(ts_language(name), query_text(name))


def build_query(ts: Language, text: str) -> Query:
    """`text` compiled for `ts`, leaving out the lines (patterns) `ts` cannot read."""
    try:
        return Query(ts, text)
    except QueryError:  # an older or newer grammar: keep the patterns it understands
        kept = [p for p in (_readable(ts, line) for line in text.splitlines()) if p]
        return Query(ts, "\n".join(kept))


def _readable(ts: Language, pattern: str) -> str:
    """`pattern` if this grammar version reads it, its known node types for a list, else ""."""
    if _compiles(ts, pattern):
        return pattern
    types = _TYPE_LIST.fullmatch(pattern)
    if types is not None:
        named = re.findall(r"\((\w+)\)", types[1])
        known = [t for t in named if _known(ts, t)]
        log.info("node types left out for this grammar version: %s", set(named) - set(known))
        if known:
            return f"[{' '.join(f'({t})' for t in known)}] {types[2]}"
    log.info("symbol pattern left out for this grammar version: %s", pattern)
    return ""


def _compiles(ts: Language, pattern: str) -> bool:
    try:
        Query(ts, pattern)
    except QueryError:
        return False
    return True


def _known(ts: Language, node_type: str) -> bool:
    return ts.id_for_node_kind(node_type, True) is not None
