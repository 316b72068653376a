"""PostgreSQL state vs SQLite state, side by side in one run (issue 14's figures).

    .venv/bin/python bench/postgres_state.py --out bench/results/postgres_state.json
    .venv/bin/python bench/postgres_state.py --questions 20 --events 20 --symbol-files 50

Starts a throwaway PostgreSQL server (bench/pgserver.py: PostgreSQL's default
durability, fsync on) in a temp directory and measures:
  1. answers: the latency of `Core.ask` (no model keys: extractive answers) over a
     real repository with SQLite stores vs PostgreSQL stores, question by question
     (ABAB), for the local index and for the deployment shape (CODECITE_INDEX=pinecone
     against the fake Pinecone server, its state read from the store): p50/p95 of
     each and what PostgreSQL adds (aim: under 5 ms at p95);
  2. symbols: one `SymbolTable.apply` of the standard library's symbols (extracted
     once) into each backend, alternating, median of --repetitions (aim: PG at most
     1.5x SQLite);
  3. claims: --replicas processes claiming the same stream of events on one
     database (and on one data directory): p50/p95/p99 per claim, and the number of
     events without exactly one winner (must be 0).
Nothing touches the network (the fake Pinecone and the server listen on loopback).
Exit status 1 when an answer differs between the backends, a claim fails or an
event has other than one winner.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import pg_answers, pg_claims, pg_symbols
from bench.pgserver import PostgresServer
from bench.report import table

ROOT = Path(__file__).resolve().parents[1]
MIRROR = Path("/work/.mirror/psf+requests/repo")
CASES = Path("/work/shared/eval/sweqa_dev.jsonl")
STDLIB = Path(sysconfig.get_paths()["stdlib"])
# Read by Settings or the stores: the run chooses every one of them itself.
CLEARED = ("OPENAI_", "CODECITE_", "PINECONE_", "DATABASE_URL")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--corpus", type=Path, default=MIRROR, help="a git repository or a directory")
    p.add_argument("--cases", type=Path, default=CASES, help="questions (sweqa jsonl)")
    p.add_argument("--cases-repo", default="psf/requests", help="whose cases to ask")
    p.add_argument("--questions", type=int, default=200)
    p.add_argument("--warmup", type=int, default=20, help="questions asked first, not timed")
    p.add_argument("--parts", default="answers,symbols,claims", help="what to measure")
    p.add_argument("--shapes", default="local,pinecone", help="indexes to measure answers on")
    p.add_argument("--stdlib", type=Path, default=STDLIB, help="the tree of the symbol ingest")
    p.add_argument("--symbol-files", type=int, help="only the first N files (smoke runs)")
    p.add_argument("--repetitions", type=int, default=3)
    p.add_argument("--replicas", type=int, default=10)
    p.add_argument("--events", type=int, default=300)
    p.add_argument("--seed", type=int, default=14)
    p.add_argument("--out", type=Path, help="write the results here as JSON")
    return p.parse_args(argv)


def checkout(corpus: Path, into: Path) -> Path:
    """A plain tree of the corpus: a git repository's HEAD (bare or not), else the directory."""
    probe = subprocess.run(
        ["git", "-C", str(corpus), "rev-parse", "HEAD"], capture_output=True, text=True
    )
    if probe.returncode != 0:
        return corpus
    name = corpus.name if corpus.name != "repo" else corpus.parent.name.split("+")[-1]
    tree = into / name
    tree.mkdir(parents=True)
    archive = subprocess.Popen(
        ["git", "-C", str(corpus), "archive", "HEAD"], stdout=subprocess.PIPE
    )
    subprocess.run(["tar", "-x", "-C", str(tree)], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        raise RuntimeError(f"git archive failed in {corpus}")
    return tree


def measure(args: argparse.Namespace, scratch: Path, server_root: Path) -> dict[str, Any]:
    started = time.perf_counter()
    result: dict[str, Any] = {"machine": machine()}
    with PostgresServer(server_root) as server:
        result["postgres_server"] = {"fsync": server.fsync, "version": server_version(server)}
        parts = set(args.parts.split(","))
        corpus = checkout(args.corpus, scratch / "corpus")
        questions = pg_answers.build_questions(
            corpus, args.cases, args.cases_repo, args.questions, args.seed
        )
        result["answers"] = {"corpus": str(args.corpus), "questions": len(questions)}
        for shape in [s for s in args.shapes.split(",") if s and "answers" in parts]:
            print(f"answers, {shape} index: {len(questions)} questions x 2 backends", flush=True)
            result["answers"][shape] = pg_answers.compare(
                pg_answers.Shape(shape),
                corpus,
                questions,
                homes=scratch / "answers",
                database_url=server.new_database(f"bench_answers_{shape}"),
                warmup=args.warmup,
            )
        if "symbols" in parts:
            print(f"symbols: extracting {args.stdlib}", flush=True)
            found = pg_symbols.extract_tree(args.stdlib, args.symbol_files)
            result["symbols"] = {
                "tree": str(args.stdlib),
                **pg_symbols.compare(
                    found,
                    homes=scratch / "symbols",
                    new_database=server.new_database,
                    repetitions=args.repetitions,
                ),
            }
        result["claims"] = {}
        for backend in ("sqlite", "postgres") if "claims" in parts else ():
            print(f"claims, {backend}: {args.replicas} replicas x {args.events} events", flush=True)
            url = server.new_database("bench_claims") if backend == "postgres" else None
            result["claims"][backend] = pg_claims.run(
                replicas=args.replicas,
                events=args.events,
                home=scratch / f"claims-{backend}",
                database_url=url,
                run=backend,
            )
    result["seconds"] = round(time.perf_counter() - started, 1)
    result["machine"]["load_after"] = [round(x, 2) for x in os.getloadavg()]
    return result


def machine() -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "system": platform.platform(),
        "load_before": [round(x, 2) for x in os.getloadavg()],  # other work on the machine
    }


def server_version(server: PostgresServer) -> str:
    import psycopg

    with psycopg.connect(f"{server.base_url}/postgres") as conn:
        row = conn.execute("SHOW server_version").fetchone()
    return str(row[0]) if row else "?"


def report(result: dict[str, Any]) -> str:
    answers = result["answers"]
    shapes = [s for s in answers if isinstance(answers[s], dict)]
    rows = []
    for shape in shapes:
        a = answers[shape]
        rows.append(
            [
                shape,
                a["questions"],
                f"{a['sqlite']['p50_ms']:.1f} / {a['sqlite']['p95_ms']:.1f}",
                f"{a['postgres']['p50_ms']:.1f} / {a['postgres']['p95_ms']:.1f}",
                f"{a['added_p50_ms']:+.1f} / {a['added_p95_ms']:+.1f}",
                f"{a['paired_added_p50_ms']:+.1f} / {a['paired_added_p95_ms']:+.1f}",
                f"{a['identical_answers']}/{a['questions']}",
            ]
        )
    header = ["index", "n", "sqlite p50/p95 ms", "postgres p50/p95 ms", "added p50/p95 ms"]
    header += ["paired added p50/p95 ms", "same answers"]
    s = result.get("symbols")
    symbols = (
        ""
        if s is None
        else table(
            ["symbol ingest", "files", "defs", "refs", "sqlite s", "postgres s", "ratio"],
            [
                [
                    "stdlib",
                    s["files"],
                    s["definitions"],
                    s["references"],
                    f"{s['sqlite']['median_s']:.3f}",
                    f"{s['postgres']['median_s']:.3f}",
                    f"{s['ratio']:.2f}x" if s["ratio"] else "-",
                ]
            ],
        )
    )
    c = result["claims"]
    claims = (
        ""
        if not c
        else table(
            [
                "claims",
                "replicas",
                "events",
                "p50 ms",
                "p95 ms",
                "p99 ms",
                "max ms",
                "not 1 winner",
            ],
            [[b, *_claim_cells(c[b])] for b in c],
        )
    )
    return "\n\n".join(t for t in (table(header, rows) if rows else "", symbols, claims) if t)


def _claim_cells(c: dict[str, Any]) -> list[Any]:
    times = [f"{c[k]:.2f}" for k in ("p50_ms", "p95_ms", "p99_ms", "max_ms")]
    return [c["replicas"], c["events"], *times, c["keys_without_exactly_one_winner"]]


def failures(result: dict[str, Any]) -> list[str]:
    found = []
    for shape, a in result["answers"].items():
        if isinstance(a, dict) and a["identical_answers"] != a["questions"]:
            found.append(f"{shape}: {a['questions'] - a['identical_answers']} answers differ")
    for backend, c in result["claims"].items():
        if c["errors"]:
            found.append(f"claims on {backend}: {c['errors'][0]}")
        if c["keys_without_exactly_one_winner"]:
            found.append(f"claims on {backend}: events without exactly one winner")
    return found


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    for name in [n for n in os.environ if n.startswith(CLEARED)]:
        del os.environ[name]
    scratch = Path(tempfile.mkdtemp(prefix="codecite-pgbench-"))
    server_root = Path(tempfile.mkdtemp(prefix="codecite-pgbench-server-"))  # postgres's own
    try:
        result = measure(args, scratch, server_root)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(server_root, ignore_errors=True)
    print(report(result))
    print(f"whole run: {result['seconds']} s")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    problems = failures(result)
    for problem in problems:
        print(f"FAILED: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
