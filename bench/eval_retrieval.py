"""Retrieval evaluation: run question/gold-file cases through codecite and its baselines.

    .venv/bin/python bench/eval_retrieval.py --clones /work/.mirror \\
        --cases /work/shared/eval/swebench_dev.jsonl --cases /work/shared/eval/sweqa_dev.jsonl \\
        --system codecite --system bm25files --out bench/results/eval.json
    .venv-bench/bin/python bench/eval_retrieval.py ... --system llamaindex   # the peer

For each repository the cases' commits are taken oldest first; each commit is
materialised with `git archive | tar -x` into one work directory per
repository and indexed under one name, so codecite indexes consecutive commits
incrementally (unchanged files are skipped by content hash). Each system then
gets the case's `question` only, ranks files (best chunk first, distinct) and,
for codecite, functions (`path::Class.method`). Scores follow the shared
score.py: acc@k, hit@k, recall@k, MRR, nDCG@10 by file, plus hit@5 on
`gold_functions`.

Protocols: `per-commit` (each case at its own commit) and `head` (cases whose
gold files still exist, against the clone's newest commit; cheaper, approximate).
--clones DIR holds `owner+name/repo` or `owner/name` clones (bare or not);
nothing is downloaded. Results: tables on stdout, everything in --out (JSON),
score.py-compatible predictions in --preds DIR.
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

from bench.bm25files import TOKENIZERS
from bench.cases import (
    PROTOCOLS,
    Case,
    CaseError,
    Step,
    case_arguments,
    find_clone,
    load_cases,
    materialise,
    plan,
)
from bench.common import percentile
from bench.functions import FunctionMap
from bench.report import run_table, side_by_side
from bench.scoring import aggregate, case_metrics, first_rank, function_hit
from bench.systems import SYSTEMS, Ranking, System, make_system

KEEP_RANKED = 100  # files kept per case (results and --preds); metrics use the full ranking
KEEP_CHUNKS = 200  # chunks kept per case with --chunks, for re-ranking experiments


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = case_arguments(__doc__)
    ap.add_argument(
        "--system", action="append", choices=SYSTEMS, help="system to score (repeatable)"
    )
    ap.add_argument("--protocol", choices=(*PROTOCOLS, "both"), default="per-commit")
    ap.add_argument("--repo", action="append", help="only these repositories (owner/name)")
    ap.add_argument("--limit", type=int, default=0, help="at most N cases per case file")
    ap.add_argument("--top-k", type=int, default=200, help="chunks retrieved per question")
    ap.add_argument("--work", type=Path, help="scratch directory (default: a temp dir)")
    ap.add_argument("--out", type=Path, help="write all results here (JSON)")
    ap.add_argument("--preds", type=Path, help="write score.py predictions here (one file/run)")
    ap.add_argument("--chunks", type=Path, help="write codecite's top chunks per case (JSONL)")
    ap.add_argument("--bm25-tokenizer", choices=TOKENIZERS, default="word")
    ap.add_argument(
        "--use-env-models",
        action="store_true",
        help="keep OPENAI_*/index settings from the environment (default: embedded, lexical)",
    )
    return ap.parse_args(argv)


def select(cases: list[Case], repos: Sequence[str] | None, limit: int) -> list[Case]:
    picked = [c for c in cases if not repos or c.repo in repos]
    if limit <= 0:
        return picked
    per_file: dict[str, int] = {}
    out = []
    for case in picked:
        if per_file.get(case.dataset, 0) < limit:
            per_file[case.dataset] = per_file.get(case.dataset, 0) + 1
            out.append(case)
    return out


def score_case(case: Case, ranking: Ranking, functions: list[str] | None) -> dict[str, Any]:
    metrics = case_metrics(ranking.files, case.gold_files)
    if case.gold_functions and functions is not None:
        metrics["fn_hit@5"] = function_hit(functions, case.gold_functions)
    return {
        "id": case.id,
        "dataset": case.dataset,
        "repo": case.repo,
        "commit": case.commit,
        "gold_files": list(case.gold_files),
        "gold_functions": list(case.gold_functions),
        "ranked_files": ranking.files[:KEEP_RANKED],
        "functions": (functions or [])[:10],
        "first_rank": first_rank(ranking.files, case.gold_files),
        "search_ms": round(ranking.seconds * 1000, 2),
        "metrics": metrics,
    }


def run_steps(
    steps: Sequence[Step],
    systems: Sequence[System],
    clones: dict[str, Path],
    work: Path,
    chunks_out: Any,
    protocol: str = "per-commit",
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[dict[str, Any]]]]:
    """Index each step's tree with every system, then ask its cases. Returns rows, ingests."""
    rows: dict[str, list[dict[str, Any]]] = {s.name: [] for s in systems}
    ingests: dict[str, list[dict[str, Any]]] = {s.name: [] for s in systems}
    for number, step in enumerate(steps, start=1):
        tree = materialise(clones[step.repo], step.commit, work / "trees" / step.repo)
        notes = []
        for system in systems:
            stats = system.prepare(step.repo, tree)
            ingests[system.name].append({"repo": step.repo, "commit": step.commit, **stats})
            notes.append(f"{system.name} {stats.get('seconds', 0.0):.1f}s")
            functions = FunctionMap(tree)
            for case in step.cases:
                ranking = system.rank(case.repo, case.question)
                ranked = _functions(functions, ranking)
                rows[system.name].append(score_case(case, ranking, ranked))
                if chunks_out is not None and ranking.chunks is not None:
                    _dump_chunks(chunks_out, system.name, protocol, case, ranking)
        print(
            f"[{number}/{len(steps)}] {step.repo}@{step.commit[:10]} "
            f"{len(step.cases)} cases; " + ", ".join(notes),
            file=sys.stderr,
            flush=True,
        )
    return rows, ingests


def _functions(functions: FunctionMap, ranking: Ranking) -> list[str] | None:
    if ranking.chunks is None:
        return None
    return functions.ranked([(c.path, c.start_line, c.end_line, c.symbol) for c in ranking.chunks])


def _dump_chunks(out: Any, system: str, protocol: str, case: Case, ranking: Ranking) -> None:
    chunks = [
        [c.path, c.start_line, c.end_line, c.symbol, c.kind, round(c.score, 6)]
        for c in (ranking.chunks or [])[:KEEP_CHUNKS]
    ]
    row = {"system": system, "protocol": protocol, "id": case.id, "chunks": chunks}
    out.write(json.dumps(row) + "\n")


def summarise(
    system: str, protocol: str, dataset: str, rows: list[dict[str, Any]], ingest: list[Any]
) -> dict[str, Any]:
    overall = _repo_metrics(rows)
    by_repo: dict[str, Any] = {}
    for repo in sorted({r["repo"] for r in rows}):
        sub = [r for r in rows if r["repo"] == repo]
        by_repo[repo] = {"n": len(sub), **_repo_metrics(sub)}
    times = [r["search_ms"] for r in rows]
    return {
        "system": system,
        "protocol": protocol,
        "dataset": dataset,
        "n": len(rows),
        "overall": overall,
        "by_repo": by_repo,
        "search_ms": {
            "p50": round(percentile(times, 0.5), 2),
            "p95": round(percentile(times, 0.95), 2),
        },
        "ingest": _ingest_totals(ingest),
    }


def _repo_metrics(rows: list[dict[str, Any]]) -> dict[str, float]:
    out = aggregate([{k: v for k, v in r["metrics"].items() if k != "fn_hit@5"} for r in rows])
    with_fn = [r for r in rows if r["gold_functions"]]
    if with_fn and any("fn_hit@5" in r["metrics"] for r in with_fn):
        hits = sum(r["metrics"].get("fn_hit@5", 0.0) for r in with_fn)
        out["fn_hit@5"] = round(hits / len(with_fn), 4)
    return out


def _ingest_totals(ingest: list[dict[str, Any]]) -> dict[str, float]:
    seconds = [float(i.get("seconds", 0.0)) for i in ingest]
    return {
        "trees": len(ingest),
        "seconds_total": round(sum(seconds), 2),
        "seconds_first": round(seconds[0], 2) if seconds else 0.0,
        "seconds_later_median": round(percentile(seconds[1:], 0.5), 2) if seconds[1:] else 0.0,
    }


def evaluate(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    cases = select(load_cases(args.cases), args.repo, args.limit)
    if not cases:
        raise CaseError("no cases selected")
    clones = {repo: find_clone(args.clones, repo) for repo in sorted({c.repo for c in cases})}
    protocols = PROTOCOLS if args.protocol == "both" else (args.protocol,)
    names = args.system or ["codecite"]
    runs: list[dict[str, Any]] = []
    all_rows: list[dict[str, Any]] = []
    chunks_out = args.chunks.open("w", encoding="utf-8") if args.chunks else None
    try:
        for protocol in protocols:
            steps = plan(cases, clones, protocol)
            systems = [
                make_system(
                    n,
                    work / f"home-{protocol}-{n}",
                    top_k=args.top_k,
                    use_env_models=args.use_env_models,
                    tokenizer=args.bm25_tokenizer,
                )
                for n in names
            ]
            try:
                rows, ingests = run_steps(
                    steps, systems, clones, work / protocol, chunks_out, protocol
                )
            finally:
                for s in systems:
                    s.close()
            for name in names:
                for dataset in sorted({r["dataset"] for r in rows[name]}):
                    sub = [r for r in rows[name] if r["dataset"] == dataset]
                    runs.append(summarise(name, protocol, dataset, sub, ingests[name]))
                    all_rows.extend({"system": name, "protocol": protocol, **r} for r in sub)
    finally:
        if chunks_out is not None:
            chunks_out.close()
    return {"runs": runs, "cases": all_rows}


def write_predictions(directory: Path, rows: list[dict[str, Any]]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(f"{r['dataset']}.{r['protocol']}.{r['system']}", []).append(r)
    for key, group in groups.items():
        lines = [json.dumps({"id": r["id"], "ranked_files": r["ranked_files"]}) for r in group]
        (directory / f"{key}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="codecite-eval-") as scratch:
        work = args.work or Path(scratch)
        try:
            result = evaluate(args, work.resolve())
        except CaseError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    result["meta"] = {
        "cases": [str(p) for p in args.cases],
        "systems": args.system or ["codecite"],
        "protocol": args.protocol,
        "top_k": args.top_k,
        "seconds": round(time.time() - started, 1),
    }
    for run in result["runs"]:
        print(run_table(run) + "\n")
    print(side_by_side(result["runs"]))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    if args.preds:
        write_predictions(args.preds, result["cases"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
