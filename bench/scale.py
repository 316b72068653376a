"""Performance at team scale: repositories added one at a time to ONE data directory.

    .venv/bin/python bench/scale.py --clones /work/.mirror \\
        --cases /work/shared/eval/sweqa_dev.jsonl --cases /work/shared/eval/swebench_dev.jsonl \\
        --target-chunks 300000 --json bench/results/scale.json
    .venv/bin/python bench/scale.py --quick --tree NAME=DIR --tree NAME2=DIR2   # a smoke run

Trees (default: requests, flask, seaborn, xarray, pytest, pylint, sphinx, sympy at their
newest commit from --clones, then this machine's standard library; see bench/trees.py for
specs) are copied to a scratch directory and indexed one by one into the same
CODECITE_HOME. After each addition a row records: repositories, files, chunks, bytes of
the data directory; a fresh `codecite search --json` process to its first result line
(wall time, its CPU seconds and peak RSS, with no keys; unscoped and scoped to the first
tree), and how much of it is the interpreter's start and importing the CLI; `codecite
status` wall time; one serving process asking the fixed question set
(bench/scale_corpus.py) unscoped and scoped, warm, top 10: p50/p95 and its RSS after
the questions. The peer, bm25s over the
same chunks and questions (bench/scale_peer.py, in the peer venv), runs beside it, once
with its own tokeniser and once with codecite's tokens. `--target-chunks N` goes on
adding the trees again under other names until N chunks (one row per pass);
`--replicas K` adds them K more times; `--rows last` measures only after the last tree
and each pass; `--profile DIR` profiles those rows' searches (bench/profile_summary.py).

Every measurement is its own child process (peak RSS from `os.wait4`); warm runs
alternate codecite, bm25s, bm25s with code tokens; medians over --repeat (cold
starts, status, --help) and --warm-repeat runs. The machine's load average is
recorded with each row: the machine is shared, read a row beside its load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.cases import CaseError
from bench.common import PEER_PYTHON, ChildResult, dir_bytes, median, python_for, run_child
from bench.scale_child import IMPORTS_SNIPPET
from bench.scale_corpus import (
    DEFAULT_TREES,
    Addition,
    Tree,
    additions,
    materialise,
    question_set,
    replicas,
    write_questions,
)
from bench.scale_peer import TOKENIZERS, export_chunks
from bench.scale_report import render, summarise_cold, summarise_warm
from bench.trees import tree_parser

HERE = Path(__file__).resolve().parent
CHILD = HERE / "scale_child.py"
PEER = HERE / "scale_peer.py"
COLD_QUESTION = "how does the session send a request and follow redirects?"


def codecite_command() -> Path:
    """The `codecite` console script beside our python (what a user runs)."""
    script = python_for("ours").parent / "codecite"
    found = script if script.exists() else shutil.which("codecite")
    if not found:
        raise SystemExit("no `codecite` command: run `make dev` first")
    return Path(found)


def timed_command(argv: Sequence[str], home: Path | None, repeat: int) -> dict[str, Any]:
    """Median wall time of a `codecite ...` command run `repeat` times; fails loudly."""
    env = {"CODECITE_HOME": str(home)} if home else {}
    walls = []
    for _ in range(repeat):
        r = run_child(codecite_command(), argv, env=env, json_line=False, timeout=600)
        if r.out is None:
            raise SystemExit(f"codecite {' '.join(argv)} failed: {r.error}")
        walls.append(r.wall)
    return {"median_s": round(median(walls), 3), "runs_s": [round(w, 3) for w in walls]}


def ingest(addition: Addition, home: Path, args: argparse.Namespace) -> dict[str, Any]:
    r = run_child(
        python_for("ours"),
        [str(CHILD), "index", str(home), str(addition.tree.path), addition.name],
        timeout=args.timeout,
    )
    if r.out is None:
        raise SystemExit(f"indexing {addition.name} failed: {r.error}")
    print(f"  indexed {addition.name}: {r.out['chunks']} chunks", file=sys.stderr, flush=True)
    return {**r.out, "wall": r.wall, "peak_rss": r.peak_rss}


def index_counts(home: Path) -> dict[str, int]:
    """Counted in the index itself, not taken from the ingest reports."""
    conn = sqlite3.connect(f"file:{home / 'index.sqlite'}?mode=ro", uri=True)
    tables = {"repositories": "repos", "files": "files", "chunks": "chunks"}
    try:
        return {
            key: int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
            for key, table in tables.items()
        }
    finally:
        conn.close()


def cold_start(home: Path, scope: str, args: argparse.Namespace, profile: Path | None) -> Any:
    """Fresh processes, alternating: bare interpreter, CLI imports, search, scoped search."""
    runs: dict[str, list[ChildResult]] = {"startup": [], "imports": [], "search": [], "scoped": []}
    search = ["search", args.cold_question, "--json", "--top-k", "10"]
    env = {"CODECITE_HOME": str(home)}
    python = python_for("ours")
    for _ in range(args.repeat):
        runs["startup"].append(run_child(python, ["-c", "pass"], json_line=False))
        runs["imports"].append(run_child(python, ["-c", IMPORTS_SNIPPET]))
        for key, argv in (("search", search), ("scoped", [*search, "--repo", scope])):
            runs[key].append(run_child(codecite_command(), argv, env=env, first_line=True))
    if profile is not None:
        profile_cold(search, env, profile)
    return summarise_cold(runs, scope)


def profile_cold(search: list[str], env: dict[str, str], where: Path) -> None:
    """The cold search once more (kept out of the medians): under cProfile, and sampled
    by py-spy when it is installed (no profiler overhead on small functions)."""
    python = python_for("ours")
    prof = ["-m", "cProfile", "-o", str(where / "cold-search.prof"), "-m", "adapters.cli.main"]
    run_child(python, [*prof, *search], env=env)
    spy = python.parent / "py-spy"
    if spy.exists():
        out = where / "cold-search.spy.txt"
        argv = ["record", "-r", "250", "-f", "raw", "-o", str(out), "--", str(python)]
        run_child(spy, [*argv, "-m", "adapters.cli.main", *search], env=env, json_line=False)


def warm_runs(
    home: Path, qfile: Path, scope: str, args: argparse.Namespace, profile: Path | None
) -> dict[str, Any]:
    systems = ["ours"] + ([] if args.peer_python is None else list(TOKENIZERS))
    chunks = home.parent / "chunks.jsonl"
    if args.peer_python is not None:
        export_chunks(home / "index.sqlite", chunks)
    runs: dict[str, list[ChildResult]] = {s: [] for s in systems}
    for i in range(args.warm_repeat):
        for system in systems:
            if system == "ours":
                where = str(profile) if profile is not None and i == 0 else ""
                argv = [str(CHILD), "warm", str(home), str(qfile), scope, where]
                r = run_child(python_for("ours"), argv, timeout=args.timeout)
            else:
                argv = [str(PEER), str(chunks), str(qfile), system, scope]
                r = run_child(args.peer_python, argv, timeout=args.timeout)
            note = f"{r.wall:.1f}s" if r.out is not None else r.error[-300:]
            print(f"    warm {system}: {note}", file=sys.stderr, flush=True)
            runs[system].append(r)
    chunks.unlink(missing_ok=True)
    return {s: summarise_warm(r) for s, r in runs.items()}


def measure_row(
    label: str,
    home: Path,
    added: list[dict[str, Any]],
    ctx: argparse.Namespace,
    profile: Path | None,
) -> dict[str, Any]:
    """One row of the table; `profile`: a directory for this row's profiles, if any."""
    load_before = os.getloadavg()[0]
    counts = index_counts(home)
    if profile is not None:
        profile.mkdir(parents=True, exist_ok=True)
    row: dict[str, Any] = {
        "label": label,
        "added": [a["name"] for a in added],
        **counts,
        "index_bytes": dir_bytes(home),
        "ingest_s": round(sum(a["seconds"] for a in added), 2),
        "ingest": added,
        "cold": cold_start(home, ctx.scope, ctx, profile),
        "status": timed_command(["status"], home, ctx.repeat),
    }
    row.update(warm_runs(home, ctx.qfile, ctx.scope, ctx, profile and profile / "warm-search.prof"))
    row["load"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    print(f"  row {label}: {counts['chunks']} chunks", file=sys.stderr, flush=True)
    return row


def grow(
    trees: list[Tree], home: Path, args: argparse.Namespace
) -> Iterator[tuple[str, list[dict[str, Any]], Path | None]]:
    """Index the trees one at a time, then replica passes while asked for; yield each row
    to measure: (label, the ingests since the last row, where to put its profiles)."""
    steps = [[a] for a in additions(trees)]
    copy, added = 1, list[dict[str, Any]]()
    while steps:
        batch = steps.pop(0)
        added += [ingest(a, home, args) | {"name": a.name} for a in batch]
        counts = index_counts(home)
        short = bool(args.target_chunks and counts["chunks"] < args.target_chunks)
        more = short or copy <= args.replicas
        final = not steps  # after the last real tree, or after a replica pass
        if final and more:
            copy += 1
            steps.append(replicas(trees, copy))
        if args.rows == "last" and not final:
            continue
        repos = counts["repositories"]
        label = f"{repos} (replicas)" if batch[0].copy > 1 else str(repos)
        # profiled: the last row of the real trees, and the last row of all
        profiled = args.profile is not None and final and (batch[0].copy == 1 or not steps)
        profile = args.profile / f"{counts['chunks']}-chunks" if profiled else None
        yield label, added, profile
        added = []


def run(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    trees = materialise(args.tree or DEFAULT_TREES, work / "trees", args.clones)
    args.scope = args.scope or trees[0].name
    if args.scope not in {t.name for t in trees}:
        raise CaseError(f"--scope {args.scope} is none of the trees ({trees[0].name}, ...)")
    questions = question_set(trees, args.cases, args.per_tree, args.real_limit)
    args.qfile = write_questions(questions, work / "questions.json")
    print(f"{len(trees)} trees, {len(questions)} questions", file=sys.stderr, flush=True)
    home = work / "home"
    result: dict[str, Any] = {
        "command": sys.argv,
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "cpus": os.cpu_count(),
        "questions": {"real": sum(k == "real" for k, _ in questions), "all": len(questions)},
        "scope": args.scope,
        "help": timed_command(["--help"], None, args.repeat),
        "rows": [],
    }
    for label, added, profile in grow(trees, home, args):
        result["rows"].append(measure_row(label, home, added, args, profile))
    result["finished"] = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    return result


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = tree_parser("Scale: repositories added one at a time; codecite beside bm25s.", __doc__)
    ap.add_argument("--per-tree", type=int, default=25, help="synthetic questions per tree")
    ap.add_argument("--real-limit", type=int, help="use at most this many real questions")
    ap.add_argument("--scope", help="repository of the scoped searches (default: the first)")
    ap.add_argument("--cold-question", default=COLD_QUESTION)
    ap.add_argument("--target-chunks", type=int, help="add replicas until this many chunks")
    ap.add_argument("--replicas", type=int, default=0, help="add every tree again N times")
    ap.add_argument("--repeat", type=int, default=3, help="cold starts, status, --help runs")
    ap.add_argument("--warm-repeat", type=int, default=1, help="serving processes per system")
    ap.add_argument(
        "--rows",
        choices=("all", "last"),
        default="all",
        help="measure after every addition, or only after the last tree and each replica pass",
    )
    ap.add_argument("--no-peer", action="store_true", help="codecite only")
    ap.add_argument("--peer-python", type=Path, default=PEER_PYTHON, help="a python with bm25s")
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds per child process")
    ap.add_argument("--profile", type=Path, help="profile the searches of the last rows here")
    ap.add_argument("--quick", action="store_true", help="a smoke run: 1 repeat, 5 per tree")
    ap.add_argument("--work", type=Path, help="scratch directory (default: a temp dir)")
    ap.add_argument("--json", type=Path, help="write the results here")
    args = ap.parse_args(argv)
    if args.quick:
        args.repeat, args.warm_repeat, args.per_tree = 1, 1, 5
        args.real_limit = 20 if args.real_limit is None else args.real_limit
    args.peer_python = None if args.no_peer else find_peer(args.peer_python)
    return args


def find_peer(python: Path) -> Path | None:
    """A python that imports bm25s: the peer venv, else this one; None (noted) if neither."""
    for candidate in (python, Path(sys.executable)):
        if not candidate.exists():
            continue
        probe = run_child(candidate, ["-c", "import bm25s"], json_line=False, timeout=120)
        if probe.out is not None:
            return candidate
    print("note: no python with bm25s (make bench-venv); codecite only", file=sys.stderr)
    return None


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="codecite-scale-") as scratch:
        work = args.work or Path(scratch)
        shutil.rmtree(work / "home", ignore_errors=True)  # one data directory, built here
        try:
            result = run(args, work)
        except (CaseError, OSError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    print(render(result))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
