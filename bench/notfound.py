"""Honest "not found": how often answers say the indexed code does not cover the question.

    .venv/bin/python bench/notfound.py --clones /work/.mirror \\
        --cases /work/shared/eval/sweqa_dev.jsonl --cases /work/shared/eval/swebench_dev.jsonl \\
        --out bench/results/notfound.json

Every question is asked with no model (extractive answers, the full
`Core.answer` path): of its own repository at its case's commit (the
per-commit protocol of eval_retrieval.py), and of each other repository of the
case files (indexed once, at the clone's newest commit). "Wrong, rotating" asks
each repository's questions of the next repository in name order (flask's of
requests, requests' of pylint, ...); "wrong, all" of every other one. A question
is flagged when its answer opens by saying the code does not cover it: the
not-covered sentence, or the symbol table's "I found no definition of that
name", or "found nothing". The aim: at least
80% of wrong-repository questions flagged, at most 5% of right-repository ones.

Systems get the question only. Nothing is downloaded; clones come from --clones.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.cases import (
    Case,
    CaseError,
    case_arguments,
    find_clone,
    head_commit,
    load_cases,
    materialise,
    plan,
)
from bench.report import table
from bench.systems import CodeciteSystem, index_name
from bot.answer.extractive import NO_MODEL, NOTHING
from bot.answer.prompts import NOT_ANSWERED
from bot.models import Question
from bot.retrieval.relevance import NOT_COVERED, PRESENT_MIN, RelevanceJudge

OTHER = "other__"  # index-name prefix of the repositories asked the wrong questions
# How an answer says the code does not cover the question (bot.answer.symbol_answer's note too).
SWEEP = (0.0, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8)
NOT_FOUND = (NOT_COVERED, "I found no definition of that name", NOTHING, NOT_ANSWERED)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = case_arguments(__doc__)
    ap.add_argument("--work", type=Path, help="scratch directory (default: a temp dir)")
    ap.add_argument("--out", type=Path, help="write all verdicts here (JSON)")
    return ap.parse_args(argv)


def run(cases: list[Case], clones: dict[str, Path], work: Path) -> list[dict[str, Any]]:
    system = CodeciteSystem(work / "home", top_k=10)
    core = system.core
    repos = sorted(clones)
    try:
        for repo in repos:  # the wrong-repository indexes, once each, at the newest commit
            tree = materialise(clones[repo], head_commit(clones[repo]), work / "other" / repo)
            core.index_repo(str(tree), name=OTHER + index_name(repo))
        rows: list[dict[str, Any]] = []
        for step in plan(cases, clones, "per-commit"):
            tree = materialise(clones[step.repo], step.commit, work / "trees" / step.repo)
            system.prepare(step.repo, tree)
            for case in step.cases:
                row = {"id": case.id, "dataset": case.dataset, "repo": case.repo}
                row["right"] = _ask(core, case.question, index_name(case.repo))
                row["wrong"] = {
                    other: _ask(core, case.question, OTHER + index_name(other))
                    for other in repos
                    if other != case.repo
                }
                row["rotating"] = repos[(repos.index(case.repo) + 1) % len(repos)]
                rows.append(row)
            print(f"{step.repo}@{step.commit[:10]}: {len(step.cases)} cases", file=sys.stderr)
        return rows
    finally:
        system.close()


def _ask(core: Any, question: str, name: str) -> dict[str, Any]:
    scope = frozenset({name})
    text = core.answer(Question(question, scope)).text
    coverage = RelevanceJudge(core.index).coverage(question, scope)
    return {
        "flagged": text.startswith(NOT_FOUND),
        # By the symbol table or for want of sources: no threshold moves these.
        "fixed": text.startswith(NOT_FOUND[1:]),
        "judged": text.startswith((NOT_COVERED, NO_MODEL)),  # the verdict decided the lead
        "present": round(coverage.present_share, 4),
        "named_missing": any(c.named for c in coverage.missing),
        "missing": [c.surface for c in coverage.missing],
        "concepts": len(coverage.concepts),
        "lead": text.split("\n", 1)[0][:200],
    }


def sweep(rows: list[dict[str, Any]], thresholds: Sequence[float]) -> list[list[Any]]:
    """What other present-share thresholds would give, from the recorded verdicts."""
    out: list[list[Any]] = []
    for threshold in thresholds:
        for dataset in sorted({r["dataset"] for r in rows}):
            sub = [r for r in rows if r["dataset"] == dataset]
            right = _share([_flag_at(r["right"], threshold) for r in sub])
            rotating = _share([_flag_at(r["wrong"][r["rotating"]], threshold) for r in sub])
            every = _share([_flag_at(w, threshold) for r in sub for w in r["wrong"].values()])
            out.append([threshold, dataset, right, rotating, every])
    return out


def _flag_at(verdict: dict[str, Any], threshold: float) -> bool:
    if verdict["fixed"] or not verdict["judged"]:
        return bool(verdict["fixed"])
    return bool(verdict["named_missing"] or verdict["present"] < threshold)


def summary(rows: list[dict[str, Any]]) -> list[list[Any]]:
    """Per dataset and repository: n, right flagged, wrong (rotating) flagged, wrong (all)."""
    out: list[list[Any]] = []
    for dataset in sorted({r["dataset"] for r in rows}):
        sub = [r for r in rows if r["dataset"] == dataset]
        groups = [("ALL", sub)] + [
            (repo, [r for r in sub if r["repo"] == repo])
            for repo in sorted({r["repo"] for r in sub})
        ]
        for name, group in groups:
            right = _share([r["right"]["flagged"] for r in group])
            rotating = _share([r["wrong"][r["rotating"]]["flagged"] for r in group])
            every = _share([w["flagged"] for r in group for w in r["wrong"].values()])
            out.append([dataset, name, len(group), right, rotating, every])
    return out


def _share(values: list[bool]) -> float:
    return round(sum(values) / len(values), 3) if values else 0.0


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="codecite-notfound-") as scratch:
        work = (args.work or Path(scratch)).resolve()
        try:
            cases = load_cases(args.cases)
            names = sorted({c.repo for c in cases})
            clones = {repo: find_clone(args.clones, repo) for repo in names}
            rows = run(cases, clones, work)
        except CaseError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    header = ["dataset", "repo", "n", "right flagged", "wrong flagged (rotating)", "wrong (all)"]
    print(f"present-share threshold {PRESENT_MIN}; any named thing missing flags\n")
    print(table(header, summary(rows)))
    swept = sweep(rows, SWEEP)
    print("\n" + table(["threshold", "dataset", "right", "wrong (rotating)", "wrong (all)"], swept))
    print(f"\n{round(time.time() - started)} s", file=sys.stderr)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        result = {
            "summary": summary(rows),
            "sweep": swept,
            "cases": rows,
            "meta": {"cases": [str(p) for p in args.cases], "present_min": PRESENT_MIN},
        }
        args.out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
