"""Which parts a repository's architecture is told in: folders, main files, or main classes.

Implementation code only (tests, examples, docs and configuration left out), below
its common root (`src/flask`, `source`). The root's subdirectories and its own files
are the candidates (a Go package's `mux.go` and `tree.go` are its architecture); the
largest (by indexed chunks, the more central first among equals) are parts, the rest
are gathered in one. A repository that is essentially one big file (`bottle.py`) is
told by its main top-level definitions instead.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.models import FileEntry
from bot.retrieval.howcalls import implementation
from bot.symbols.model import SymbolDef

MAX_PARTS = 8
BIG_FILE_CHUNKS = 40  # a file this large, alone, is told by its definitions
ROOT_SHARE = 0.9  # a directory holding this share of the code is its root
_CLASSY = frozenset({"class", "struct", "interface", "trait", "type", "enum", "function"})


@dataclass(frozen=True, slots=True)
class PartPlan:
    name: str
    path: str
    files: tuple[str, ...]
    is_folder: bool
    span: SymbolDef | None = None
    merged: bool = False  # the smaller parts gathered in one: no role of its own


def plan_parts(manifest: Mapping[str, FileEntry], ranked: Sequence[SymbolDef]) -> list[PartPlan]:
    """The parts, most important first; `ranked`: the most referenced definitions, best first."""
    from bot.code.registry import SYNTAX_LANGUAGES  # late: it loads tree-sitter's grammars

    code = sorted(
        p for p, e in manifest.items() if e.language in SYNTAX_LANGUAGES and implementation(p)
    )
    if not code:
        return []
    root = _root(code)
    prefix = f"{root}/" if root else ""
    direct = [p for p in code if "/" not in p[len(prefix) :]]
    folders: dict[str, list[str]] = {}
    for p in code:
        rest = p[len(prefix) :]
        if "/" in rest:
            folders.setdefault(rest.split("/", 1)[0], []).append(p)
    weight = _centrality(ranked)
    size = {p: len(manifest[p].chunk_ids) for p in code}
    candidates = [PartPlan(p.rsplit("/", 1)[-1], p, (p,), False) for p in direct]
    candidates += [
        PartPlan(f"{name}/", f"{prefix}{name}", tuple(f), True) for name, f in folders.items()
    ]
    # The largest parts tell the architecture; among parts of one size, the most central.
    candidates.sort(
        key=lambda c: (-sum(size[f] for f in c.files), -sum(weight[f] for f in c.files), c.name)
    )
    plans = candidates
    if len(candidates) > MAX_PARTS:
        plans, merged = candidates[: MAX_PARTS - 1], candidates[MAX_PARTS - 1 :]
        files = tuple(f for p in merged for f in p.files)
        names = ", ".join(p.name for p in merged[:3]) + (", …" if len(merged) > 3 else "")
        plans.append(PartPlan(f"the rest ({names})", root, files, True, merged=True))
    big = [
        p
        for p in plans
        if len(p.files) == 1 and len(manifest[p.files[0]].chunk_ids) >= BIG_FILE_CHUNKS
    ]
    if len(plans) <= 2 and big:
        return _by_definitions(big[0], ranked) + [p for p in plans if p is not big[0]]
    return plans


def _root(code: Sequence[str]) -> str:
    """The directory most of the code is under (no code files of its own beside it)."""
    root, paths = "", list(code)
    while True:
        prefix = f"{root}/" if root else ""
        rel = [p[len(prefix) :] for p in paths]
        if not rel or any("/" not in r for r in rel):
            return root
        top, n = Counter(r.split("/", 1)[0] for r in rel).most_common(1)[0]
        if n / len(rel) < ROOT_SHARE:
            return root
        root = f"{prefix}{top}"
        paths = [p for p in paths if p.startswith(f"{root}/")]


def _centrality(ranked: Sequence[SymbolDef]) -> Counter[str]:
    """Per file, how central its definitions are: a higher rank counts for more."""
    weight: Counter[str] = Counter()
    for i, d in enumerate(ranked):
        weight[d.path] += len(ranked) - i
    return weight


def _by_definitions(plan: PartPlan, ranked: Sequence[SymbolDef]) -> list[PartPlan]:
    """One big file told by its main top-level definitions, classes first."""
    own = [d for d in ranked if d.path == plan.path and "." not in d.symbol and d.kind in _CLASSY]
    own.sort(key=lambda d: d.kind not in ("class", "struct", "interface", "trait"))
    # Of the most referenced, the largest: a big class is a part; a small error type is not.
    chosen = sorted(own[: MAX_PARTS * 2], key=lambda d: d.start_line - d.end_line)[:MAX_PARTS]
    chosen.sort(key=lambda d: d.start_line)
    if len(chosen) < 2:
        return [plan]
    name = plan.path.rsplit("/", 1)[-1]
    return [PartPlan(f"{d.symbol} ({name})", plan.path, plan.files, False, d) for d in chosen]
