"""History evaluation: which commits a system cites for why / when / who / since questions.

    .venv/bin/python bench/history_eval.py --clones /work/.mirror \\
        --cases bench/cases/history_eval.jsonl --system gitgrep --system codecite \\
        --out /tmp/history_eval.json

Every repository is taken at its cases' pinned commit with its whole history. Each
question goes to each system; the commits it cites are scored against the case's gold
(bench/history_scoring.py): top1 / top5 per question kind, exact for "who last changed",
share of gold for "since <tag>". Systems:

  gitgrep   `git log -i -F --grep=<word>...` over the question's words (history_gitgrep.py)
  codecite  `codecite index --history-commits`, `Core.answer`, `codecite search --json`
            (history_codecite.py); reported twice: "codecite answer" and "codecite search"

Before anything is asked, the gold of every "who" case is re-derived with `git log -1 -L`
(no cost but git): a drifted gold stops the run (exit 1). A system that cannot run here
(codecite without history) says so in one line and the others still run (exit 3).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, Protocol

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.cases import CaseError
from bench.history_casefile import HistoryCase, load_history_cases
from bench.history_cases import Clones, derive_row
from bench.history_codecite import CodeciteHistory, SystemUnavailable
from bench.history_gitgrep import GitGrepSystem
from bench.history_scoring import normalised, score_case, summarise
from bench.report import table

SYSTEMS = ("gitgrep", "codecite")
DEFAULT_CASES = Path(__file__).resolve().parent / "cases" / "history_eval.jsonl"
EXIT_DRIFT, EXIT_CASES, EXIT_UNAVAILABLE = 1, 2, 3


class HistorySystem(Protocol):
    name: str
    sources: tuple[str, ...]

    def prepare(self, repo: str, git_dir: Path, commit: str) -> None: ...

    def ask(self, repo: str, commit: str, question: str) -> dict[str, list[str]]: ...

    def close(self) -> None: ...


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__,
    )
    ap.add_argument("--clones", type=Path, required=True, help="directory of local git clones")
    ap.add_argument("--cases", type=Path, action="append", help="JSONL case file (repeatable)")
    ap.add_argument("--system", action="append", choices=SYSTEMS, help="default: both")
    ap.add_argument("--repo", action="append", help="only these repositories (owner/name)")
    ap.add_argument("--work", type=Path, help="scratch directory (default: a temp dir)")
    ap.add_argument("--out", type=Path, help="write every case's cited commits here (JSON)")
    ap.add_argument("--no-gold-check", action="store_true", help="skip the `git log -L` check")
    return ap.parse_args(argv)


def gold_drift(cases: Sequence[HistoryCase], clones: Clones) -> list[str]:
    """One line per "who" case whose `git log -1 -L` commit is no longer its gold."""
    lines = []
    for case in cases:
        if case.kind != "who":
            continue
        fresh = derive_row(case.row, clones)["gold_commits"]
        if fresh != list(case.gold_commits):
            lines.append(f"{case.id}: gold {case.gold_commits[0][:10]} is now {fresh[0][:10]}")
    return lines


def make_systems(names: Sequence[str], work: Path) -> tuple[list[HistorySystem], list[str]]:
    systems: list[HistorySystem] = []
    failures: list[str] = []
    for name in names:
        try:
            systems.append(GitGrepSystem() if name == "gitgrep" else CodeciteHistory(work))
        except SystemUnavailable as exc:
            failures.append(f"{name}: {exc}")
    return systems, failures


def run(
    cases: Sequence[HistoryCase], clones: Clones, systems: list[HistorySystem]
) -> tuple[list[dict[str, Any]], list[str]]:
    """Prepare every (repository, commit) for every system, then ask every question."""
    failures: list[str] = []
    trees = sorted({(c.repo, c.commit) for c in cases})
    for system in list(systems):
        try:
            for repo, commit in trees:
                started = time.perf_counter()
                system.prepare(repo, clones.git_dir(repo), commit)
                took = time.perf_counter() - started
                print(f"{system.name}: {repo}@{commit[:10]} ready ({took:.0f} s)", file=sys.stderr)
        except SystemUnavailable as exc:
            failures.append(f"{system.name}: {exc}")
            systems.remove(system)
    rows = [ask_all(case, systems) for case in cases]
    return rows, failures


def ask_all(case: HistoryCase, systems: Sequence[HistorySystem]) -> dict[str, Any]:
    row: dict[str, Any] = {"id": case.id, "repo": case.repo, "kind": case.kind}
    cited: dict[str, list[str]] = {}
    for system in systems:
        for source, shas in system.ask(case.repo, case.commit, case.question).items():
            label = system.name if len(system.sources) == 1 else f"{system.name} {source}"
            cited[label] = normalised(shas)
    row["cited"] = cited
    row["scores"] = {k: score_case(case.kind, case.gold_commits, v) for k, v in cited.items()}
    return row


def report(summary: list[dict[str, Any]]) -> str:
    columns = ["n", "top1", "top5", "exact", "share", "cited"]
    by_kind = [
        [s["system"], s["kinds"], *(s[c] for c in columns)] for s in summary if s["repo"] == "ALL"
    ]
    by_repo = [
        [s["system"], s["repo"], s["kinds"], *(s[c] for c in columns)]
        for s in summary
        if s["repo"] != "ALL" and s["kinds"] in ("when+why", "who", "since", "ALL")
    ]
    return "\n\n".join(
        [
            table(["system", "kinds", *columns], by_kind),
            table(["system", "repo", "kinds", *columns], by_repo),
        ]
    )


def write_out(path: Path, rows: list[dict[str, Any]], summary: list[dict[str, Any]]) -> None:
    cases = [
        {
            "id": r["id"],
            "repo": r["repo"],
            "kind": r["kind"],
            "cited": r["cited"],
            "scores": {k: asdict(v) for k, v in r["scores"].items()},
        }
        for r in rows
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"summary": summary, "cases": cases}, indent=1), encoding="utf-8")


def evaluate(args: argparse.Namespace, work: Path) -> int:
    cases = load_history_cases(args.cases or [DEFAULT_CASES])
    if args.repo:
        cases = [c for c in cases if c.repo in args.repo]
    clones = Clones(args.clones)
    if not args.no_gold_check:
        drift = gold_drift(cases, clones)
        for line in drift:
            print(line, file=sys.stderr)
        if drift:
            print(f"gold drifted for {len(drift)} cases: rebuild them", file=sys.stderr)
            return EXIT_DRIFT
    systems, failures = make_systems(args.system or SYSTEMS, work)
    try:
        rows, more = run(cases, clones, systems)
    finally:
        for system in systems:
            system.close()
    failures += more
    for line in failures:
        print(line, file=sys.stderr)
    summary = summarise(rows)
    if summary:
        print(report(summary))
    if args.out:
        write_out(args.out, rows, summary)
    return EXIT_UNAVAILABLE if failures else 0


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="codecite-history-") as scratch:
        try:
            code = evaluate(args, (args.work or Path(scratch)).resolve())
        except CaseError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_CASES
    print(f"{round(time.time() - started)} s", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
