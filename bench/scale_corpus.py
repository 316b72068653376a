"""What bench/scale.py adds to its one data directory, in order, and the questions it asks.

Trees are tree specs as in bench/trees.py (`owner/name` from --clones at its newest
commit, `stdlib`, `NAME=PATH`), each indexed under its short name (`psf/requests` ->
`requests`). A synthetic scale past the real trees is reached by indexing the same
trees again under other names (`requests-copy2`): real code, real chunk sizes, and every
term's document frequency doubled, which is what a larger team's index looks like to
the engine (more postings per term), not a corpus of generated text.

The question set is fixed for a whole run (the same questions at every size, so a
row differs from the last only by what was added): the real questions of the cases
files about the planned trees, plus synthetic identifier questions from every tree
(bench/query.py's generator), generated once up front.
"""

from __future__ import annotations

import cProfile
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.query import case_questions, synthetic_questions
from bench.trees import snapshot, warm

DEFAULT_TREES = (
    "psf/requests",
    "pallets/flask",
    "mwaskom/seaborn",
    "pydata/xarray",
    "pytest-dev/pytest",
    "pylint-dev/pylint",
    "sphinx-doc/sphinx",
    "sympy/sympy",
    "stdlib",
)
WARMUP = 10  # questions asked (both ways) before the clock starts
# A question -> the repository of each hit, best first (top 10).
Search = Callable[[str], list[str]]
REPLICA_MARK = "-copy"  # `sympy-copy2`: the second copy of sympy


@dataclass(frozen=True, slots=True)
class Tree:
    spec: str  # as given: `psf/requests`, `stdlib`, `NAME=PATH`
    name: str  # the repository name in codecite
    path: Path  # a plain directory holding its files


@dataclass(frozen=True, slots=True)
class Addition:
    """One `index` into the shared data directory."""

    name: str
    tree: Tree
    copy: int = 1  # 1: the tree itself; 2, 3, ...: a replica under another name


def short_name(label: str) -> str:
    return label.rstrip("/").rsplit("/", 1)[-1]


def materialise(specs: Sequence[str], work: Path, clones: Path | None) -> list[Tree]:
    """Every spec as a directory under `work`, read once so the page cache is warm."""
    trees: list[Tree] = []
    for spec in specs:
        label, path = snapshot(spec, work, clones)
        tree = Tree(spec, short_name(label), path)
        if any(t.name == tree.name for t in trees):
            raise SystemExit(f"two trees would both be named {tree.name!r}: give one NAME=PATH")
        warm(path)
        trees.append(tree)
    return trees


def additions(trees: Sequence[Tree]) -> list[Addition]:
    return [Addition(t.name, t) for t in trees]


def replicas(trees: Sequence[Tree], copy: int) -> list[Addition]:
    """Every tree once more, under `name-copyN`."""
    return [Addition(f"{t.name}{REPLICA_MARK}{copy}", t, copy) for t in trees]


def question_set(
    trees: Sequence[Tree], cases: Sequence[Path], per_tree: int, real_limit: int | None
) -> list[tuple[str, str]]:
    """(kind, question): the cases' real questions about the trees, then synthetic ones."""
    real = [q for t in trees for q in case_questions(cases, t.spec)]
    synthetic = [q for t in trees for q in synthetic_questions(t.path, per_tree)]
    real = real[:real_limit] if real_limit is not None else real
    return [("real", q) for q in real] + [("synthetic", q) for q in synthetic]


def write_questions(questions: Sequence[tuple[str, str]], path: Path) -> Path:
    path.write_text(json.dumps(list(questions)), encoding="utf-8")
    return path


def read_questions(path: str | Path) -> list[str]:
    return [q for _, q in json.loads(Path(path).read_text(encoding="utf-8"))]


def ask_all(
    questions: Sequence[str], unscoped: Search, scoped: Search, scope: str, profile: str = ""
) -> dict[str, Any]:
    """Every question unscoped, then scoped, side by side so noise hits both alike; the timed
    loop is profiled into `profile` when one is named."""
    for q in questions[:WARMUP]:
        unscoped(q)
        scoped(q)
    times, scoped_times, empty, outside = [], [], 0, 0
    profiler = cProfile.Profile() if profile else None
    if profiler:
        profiler.enable()
    for q in questions:
        started = time.perf_counter()
        hits = unscoped(q)
        times.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        scoped_hits = scoped(q)
        scoped_times.append((time.perf_counter() - started) * 1000)
        empty += not hits
        outside += sum(repo != scope for repo in scoped_hits)
    if profiler:
        profiler.disable()
        profiler.dump_stats(profile)
    return {
        "times_ms": times,
        "scoped_times_ms": scoped_times,
        "empty": empty,  # questions with no hit at all, unscoped
        "outside_scope": outside,  # scoped hits from another repository: must be 0
    }
