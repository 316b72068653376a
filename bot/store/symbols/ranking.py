"""Which definitions matter most in a repository: how much the rest of the code uses them.

A definition's `referrers` are the files of the same repository, other than its
own, that refer to it. References are recorded by name, not resolved, so two
rules keep a common name from borrowing the fame of its namesakes:

- a member (a method, a nested class or function) counts only the files that
  name its owner too: `Session.send` is referred to by files that use `send`
  and `Session`, not by every file sending anything;
- a top-level Python or Go definition counts only the files that also name its
  module (Python) or package (Go), as an import or a qualified use does, so a
  function `text` does not own every variable called `text`;
- a top-level name defined several times shares its referrers among its
  definitions: score = referrers / definitions of that name, the number of
  referring files each namesake can expect to own.

This is what a PageRank over the name graph would reward first (many distinct
users, an unambiguous target) at a fraction of the cost: one pass over each
file's distinct names, no iteration.

Order: public definitions outside tests, examples and docs first; then by
score, referrers, types before functions before methods, outer before inner,
path and line. Private names (`_x`, `__x__`) and Rust `impl` blocks (their type
carries the name) come last. One row is kept per (path, symbol).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from bot.symbols.model import RankedSymbol, SymbolDef

_KIND_ORDER = {
    "class": 0,
    "struct": 0,
    "interface": 0,
    "trait": 0,
    "enum": 0,
    "module": 1,
    "namespace": 1,
    "function": 2,
    "macro": 2,
    "method": 3,
}
_SECONDARY_KINDS = frozenset({"impl"})
_CONTAINERS = frozenset({"module", "namespace"})  # members need not name these to use them
# Directories and file names of tests, examples and documentation.
_PERIPHERAL_DIRS = frozenset(
    {
        "test",
        "tests",
        "testing",
        "__tests__",
        "spec",
        "specs",
        "testdata",
        "test_data",
        "fixtures",
        "fixture",
        "example",
        "examples",
        "doc",
        "docs",
        "benchmark",
        "benchmarks",
        "e2e",
    }
)
_PERIPHERAL_FILES = re.compile(
    r"(^test_.*|.*_test\.\w+|.*[._](test|spec)\.[jt]sx?|.*Tests?\.(java|cs|kt)|.*_spec\.rb"
    r"|conftest\.py)$"
)


@dataclass(frozen=True, slots=True)
class FileNames:
    """One file of the repository: its id and the distinct names it refers to."""

    fid: int
    names: frozenset[str]


@dataclass(frozen=True, slots=True)
class _Candidate:
    fid: int
    definition: SymbolDef
    owner: str  # the name a referring file must also use, "" for none


def rank(
    definitions: Sequence[tuple[int, SymbolDef]], files: Iterable[FileNames]
) -> list[RankedSymbol]:
    """Every definition of one repository, best first; `definitions` are (fid, definition)."""
    candidates = _candidates(definitions)
    wanted = {c.definition.name for c in candidates}
    owners: dict[str, set[str]] = {}
    by_file: dict[int, list[int]] = {}
    for i, c in enumerate(candidates):
        by_file.setdefault(c.fid, []).append(i)
        if c.owner:
            owners.setdefault(c.definition.name, set()).add(c.owner)
    owned = set(owners)
    users: Counter[str] = Counter()  # name -> referring files
    pairs: Counter[tuple[str, str]] = Counter()  # (name, owner) -> files referring to both
    own = [False] * len(candidates)  # whether a definition's own file refers to it
    for f in files:
        used = f.names & wanted
        users.update(used)
        for name in used & owned:
            for o in owners[name]:
                if o in f.names:
                    pairs[name, o] += 1
        for i in by_file.get(f.fid, ()):
            c = candidates[i]
            own[i] = c.definition.name in f.names and (not c.owner or c.owner in f.names)
    shares = Counter((c.owner, c.definition.name) for c in candidates if _shares(c))
    ranked = []
    for i, c in enumerate(candidates):
        d = c.definition
        referrers = (pairs[d.name, c.owner] if c.owner else users[d.name]) - own[i]
        ranked.append(RankedSymbol(d, referrers / max(1, shares[c.owner, d.name]), referrers))
    ranked.sort(key=_order)
    return ranked


def _candidates(definitions: Sequence[tuple[int, SymbolDef]]) -> list[_Candidate]:
    """One per (path, symbol), in path and line order, each with the owner it needs."""
    kinds: dict[str, str] = {}
    for _, d in definitions:
        kinds.setdefault(d.symbol, d.kind)
    seen: set[tuple[str, str]] = set()
    out = []
    for fid, d in sorted(definitions, key=lambda item: (item[1].path, item[1].start_line)):
        if (d.path, d.symbol) in seen:
            continue
        seen.add((d.path, d.symbol))
        parent = d.symbol.rpartition(".")[0]
        owner = ""
        if parent and kinds.get(parent, "") not in _CONTAINERS:
            owner = parent.rpartition(".")[2]
        elif not parent:
            owner = _module_name(d.path, d.name)
        out.append(_Candidate(fid, d, owner))
    return out


def _module_name(path: str, name: str) -> str:
    """The name a file must use to import a top-level definition, where imports name modules.

    Python imports name the module (`from pkg.grammar import text`), Go calls name the
    package (`grammar.Text()`), so a file using `text` without `grammar` means another
    `text` (a variable). Elsewhere imports are strings or absent: "" (no rule).
    """
    *dirs, file = path.split("/")
    stem, _, ext = file.rpartition(".")
    if ext in ("py", "pyi"):
        module = dirs[-1] if stem == "__init__" and dirs else stem
    elif ext == "go":
        module = dirs[-1] if dirs else ""
    else:
        return ""
    return "" if module == name else module


def _shares(c: _Candidate) -> bool:
    return c.definition.kind not in _SECONDARY_KINDS


@lru_cache(maxsize=4096)
def peripheral(path: str) -> bool:
    """Whether `path` is a test, an example or documentation (by common conventions)."""
    *dirs, name = path.split("/")
    return bool(_PERIPHERAL_DIRS.intersection(d.lower() for d in dirs)) or bool(
        _PERIPHERAL_FILES.match(name)
    )


def _primary(d: SymbolDef) -> bool:
    return not d.name.startswith("_") and d.kind not in _SECONDARY_KINDS


def _order(r: RankedSymbol) -> tuple[bool, bool, float, int, int, int, str, int]:
    d = r.definition
    return (
        not _primary(d),
        peripheral(d.path),
        -r.score,
        -r.referrers,
        _KIND_ORDER.get(d.kind, 2),
        d.symbol.count("."),
        d.path,
        d.start_line,
    )
