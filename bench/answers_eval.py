"""Answers a person reads, scored on outside questions: the first place cited, false "not
found", confidently wrong definitions, and whether other repositories change them.

    PYTHONHASHSEED=0 .venv/bin/python bench/answers_eval.py --clones /work/.mirror \\
        --cases bench/cases/answers_outside.jsonl --out bench/results/answers_outside.json

Each repository of the case file is materialised at its cases' commit (`git archive`) and
indexed alone in a fresh data directory, under the name `codecite index <its URL>` gives it
(`koajs/koa` -> `koa`: a question naming the repository names it as a team would). Every
question is asked there with no keys (the extractive answer, `Core.answer(Question(text,
scope=frozenset({name})))`). Then a second data directory holds the same tree under the
same name plus an unrelated repository (`--unrelated owner/name` at its newest commit, or
by default the next repository of the case file at its own commit), and every question is
asked again, scoped the same way: an answer that differs (text or citations) counts as
changed. The scoring rules are in bench/answer_scoring.py. Nothing is downloaded; clones
come from --clones.

PYTHONHASHSEED=0 makes two runs give the same answers: without it an excerpt's lines may
differ between runs where candidates tie (one answer of 113 did), which is noise in a
before/after comparison.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.answer_cases import KINDS, AnswerCase, Span, load_answer_cases
from bench.answer_scoring import (
    SUMMARY_HEADER,
    Reply,
    Scored,
    lead,
    same_reply,
    score,
    summary_row,
)
from bench.cases import CaseError, case_arguments, find_clone, head_commit, materialise
from bench.common import median
from bench.report import table
from bench.systems import CodeciteSystem
from bot.ingest.sources import default_name
from bot.models import Question

DEFAULT_CASES = Path(__file__).resolve().parent / "cases" / "answers_outside.jsonl"
Tree = tuple[str, str, Path]  # (owner/name, commit, materialised directory)


def parse_args(argv: Sequence[str] | None) -> Any:
    ap = case_arguments(__doc__, cases=False)
    ap.add_argument("--cases", type=Path, action="append", help=f"JSONL (default {DEFAULT_CASES})")
    ap.add_argument("--unrelated", help="owner/name of the repository added beside each one")
    ap.add_argument("--work", type=Path, help="scratch directory (default: a temp dir)")
    ap.add_argument("--out", type=Path, help="write every answer and verdict here (JSON)")
    ap.add_argument("--show", action="store_true", help="print every answer on stderr")
    return ap.parse_args(argv)


def index_name(repo: str) -> str:
    """The name `codecite index https://github.com/<repo>` indexes it under."""
    return default_name(f"https://github.com/{repo}")


def plan_trees(cases: Sequence[AnswerCase], clones: Path, work: Path) -> dict[str, Tree]:
    """One tree per repository, at the commit its cases name."""
    commits: dict[str, set[str]] = {}
    for case in cases:
        commits.setdefault(case.repo, set()).add(case.commit)
    names = [index_name(repo) for repo in commits]
    if len(set(names)) < len(names):
        raise CaseError(f"two repositories would be indexed under one name: {sorted(names)}")
    trees: dict[str, Tree] = {}
    for repo in sorted(commits):
        if len(commits[repo]) > 1:
            raise CaseError(f"{repo}: cases name {len(commits[repo])} commits; pin one")
        commit = commits[repo].pop()
        trees[repo] = _tree(clones, repo, commit, work)
    return trees


def _tree(clones: Path, repo: str, commit: str | None, work: Path) -> Tree:
    clone = find_clone(clones, repo)
    commit = commit or head_commit(clone)
    dest = work / "trees" / f"{repo.replace('/', '+')}@{commit[:12]}"
    return repo, commit, dest if dest.is_dir() else materialise(clone, commit, dest)


def unrelated_for(repo: str, trees: dict[str, Tree], fixed: Tree | None) -> Tree:
    """The repository indexed beside `repo`: the fixed one, or the next in name order."""
    if fixed is not None and index_name(fixed[0]) == index_name(repo):
        raise CaseError(f"{fixed[0]} and {repo} would be indexed under one name")
    if fixed is not None:
        return fixed
    names = sorted(trees)
    other = names[(names.index(repo) + 1) % len(names)]
    if other == repo:
        raise CaseError(f"only {repo} in the cases: name another with --unrelated owner/name")
    return trees[other]


def ask_all(home: Path, indexed: Sequence[Tree], cases: Sequence[AnswerCase]) -> list[Any]:
    """Index `indexed` into a fresh data directory, then ask every case scoped to its repo."""
    shutil.rmtree(home, ignore_errors=True)  # a --work kept from another run starts afresh
    system = CodeciteSystem(home)
    try:
        for repo, _, tree in indexed:
            system.core.index_repo(str(tree), name=index_name(repo))
        return [_ask(system, case) for case in cases]
    finally:
        system.close()


def _ask(system: CodeciteSystem, case: AnswerCase) -> tuple[Reply, float]:
    started = time.perf_counter()
    try:
        answer = system.core.answer(Question(case.question, frozenset({index_name(case.repo)})))
        spans = tuple(Span(c.path, c.start_line, c.end_line) for c in answer.citations)
        reply = Reply(answer.text, answer.mode, spans)
    except Exception as exc:  # an answer that fails is scored as one with no citation
        reply = Reply(f"error: {type(exc).__name__}: {exc}", "error", ())
    return reply, (time.perf_counter() - started) * 1000


def run(
    cases: Sequence[AnswerCase], clones: Path, work: Path, unrelated: str | None, show: bool
) -> tuple[list[Scored], list[dict[str, Any]], dict[str, str]]:
    trees = plan_trees(cases, clones, work)
    fixed = _tree(clones, unrelated, None, work) if unrelated else None
    scored: list[Scored] = []
    records: list[dict[str, Any]] = []
    pairs: dict[str, str] = {}
    for repo, tree in trees.items():
        mine = [c for c in cases if c.repo == repo]
        other = unrelated_for(repo, trees, fixed)
        pairs[repo] = f"{other[0]}@{other[1][:12]}"
        slug = repo.replace("/", "+")
        alone = ask_all(work / "homes" / f"{slug}-alone", [tree], mine)
        mixed = ask_all(work / "homes" / f"{slug}-with-other", [other, tree], mine)
        for case, (reply, ms), (beside, _) in zip(mine, alone, mixed, strict=True):
            verdict = score(case, reply)
            changed = not same_reply(reply, beside)
            scored.append(Scored(case, verdict, changed, ms))
            records.append(_record(case, reply, beside, verdict, changed, ms))
            if show:
                print(
                    f"=== {case.id} [{case.kind}] {case.question}\n{reply.text}\n", file=sys.stderr
                )
        print(f"{repo}: {len(mine)} questions (beside {pairs[repo]})", file=sys.stderr)
    return scored, records, pairs


def _record(
    case: AnswerCase, reply: Reply, beside: Reply, verdict: Any, changed: bool, ms: float
) -> dict[str, Any]:
    return {
        "id": case.id,
        "repo": case.repo,
        "kind": case.kind,
        "question": case.question,
        "verdict": asdict(verdict),
        "mode": reply.mode,
        "lead": lead(reply.text)[:300],
        "citations": [c.label for c in reply.citations],
        "changed": changed,
        "beside_citations": [c.label for c in beside.citations] if changed else None,
        "ms": round(ms, 1),
        "text": reply.text,
    }


def by_kind(scored: Sequence[Scored]) -> list[list[Any]]:
    rows = [[kind, *summary_row([s for s in scored if s.case.kind == kind])] for kind in KINDS]
    rows = [r for r in rows if r[1] != "0"]
    return [*rows, ["ALL", *summary_row(scored)]]


def by_repo(scored: Sequence[Scored]) -> list[list[Any]]:
    repos = sorted({s.case.repo for s in scored})
    return [[repo, *summary_row([s for s in scored if s.case.repo == repo])] for repo in repos]


def latency(scored: Sequence[Scored]) -> dict[str, float]:
    return {k: round(median([s.ms for s in scored if s.case.kind == k]), 1) for k in KINDS}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started, load_before = time.time(), os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="codecite-answers-") as scratch:
        work = (args.work or Path(scratch)).resolve()
        try:
            cases = load_answer_cases(args.cases or [DEFAULT_CASES])
            scored, records, pairs = run(cases, args.clones, work, args.unrelated, args.show)
        except CaseError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    kinds, repos = by_kind(scored), by_repo(scored)
    print(table(["kind", *SUMMARY_HEADER], kinds))
    print("\n" + table(["repository", *SUMMARY_HEADER], repos))
    meta = {
        "cases": [str(p) for p in args.cases or [DEFAULT_CASES]],
        "unrelated": pairs,
        "median_ms": latency(scored),
        "seconds": round(time.time() - started, 1),
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
    }
    print(f"\n{json.dumps(meta)}", file=sys.stderr)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        result = {"by_kind": kinds, "by_repo": repos, "meta": meta, "cases": records}
        args.out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
