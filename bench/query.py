"""Search latency p50/p95, codecite beside the LlamaIndex recipe, warm, in process, no network.

    .venv/bin/python bench/query.py                                  # the stdlib
    .venv/bin/python bench/query.py --tree pylint-dev/pylint --clones /work/.mirror \\
        --cases /work/shared/eval/sweqa_dev.jsonl --cases /work/shared/eval/swebench_dev.jsonl

Questions: for an evaluation repository, its real questions from --cases (SWE-QA
questions and whole SWE-bench issues); for any tree, questions built from its
own definitions (symbol names in natural phrasing, dotted names, file names and
plain-English questions), so every kind of query analysis is exercised. The
same questions go to both systems, top 10 chunks each (the peer also ranks
files by best chunk, as the CLI does). Each system builds its index and
answers every question in its own child process (peak RSS = serving memory,
summed over the child and any processes it starts, see bench/ingest.py);
runs alternate ours, peer, ours...; medians over --repeat runs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import PEER_PYTHON, ChildResult, emit, median, percentile, python_for, ratio
from bench.common import run_child as run
from bench.ingest import tree_memory, with_tree_memory
from bench.report import table
from bench.trees import snapshots, tree_parser, warm

TEMPLATES = (
    "how does {sym} work?",
    "where is {sym} defined",
    "what calls {sym} and why",
    "explain the {words} logic",
    "why would {sym} raise an error when the input is empty?",
    "{path}",
    "where do we handle {words}?",
)
_DEF = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)", re.M)
WARMUP = 10
TOP_K = 10


def synthetic_questions(root: Path, n: int, seed: int = 1) -> list[str]:
    """Questions about the tree's own Python definitions (stdlib regex, no index needed)."""
    rnd = random.Random(seed)
    files = sorted(p for p in root.rglob("*.py") if p.is_file() and not p.is_symlink())
    rnd.shuffle(files)
    out: list[str] = []
    for path in files:
        if len(out) >= n:
            break
        names = _DEF.findall(path.read_text(encoding="utf-8", errors="replace"))
        if not names:
            continue
        sym = rnd.choice(names)
        words = " ".join(w for w in re.split(r"_|(?<=[a-z])(?=[A-Z])", sym) if w)[:60]
        rel = path.relative_to(root).as_posix()
        out.append(rnd.choice(TEMPLATES).format(sym=sym, words=words or sym, path=rel))
    return out


def case_questions(cases: Sequence[Path], repo: str) -> list[str]:
    out = []
    for path in cases:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                if row.get("repo") == repo:
                    out.append(str(row["question"]))
    return out


def child_ours(tree: str, questions_file: str, home: str) -> None:
    os.environ["CODECITE_HOME"] = home
    from bot.config import FileConfig, LimitsConfig, Settings
    from bot.core import CLI, Core

    questions = [q for _, q in json.loads(Path(questions_file).read_text(encoding="utf-8"))]
    core = Core.from_settings(Settings(), FileConfig(limits=LimitsConfig(max_question_chars=10**6)))
    started = time.perf_counter()
    core.index_repo(tree, name="bench")
    build = time.perf_counter() - started
    repos = frozenset({"bench"})
    times = _timed(lambda q: core.search(q, CLI, repos=repos, top_k=TOP_K), questions)
    core.close()
    emit({"build_seconds": build, "times_ms": times})


def child_peer(tree: str, questions_file: str, _scratch: str) -> None:
    from bench.peer import PeerIndex

    questions = [q for _, q in json.loads(Path(questions_file).read_text(encoding="utf-8"))]
    started = time.perf_counter()
    index, _ = PeerIndex.build(Path(tree), top_k=TOP_K)
    build = time.perf_counter() - started
    emit({"build_seconds": build, "times_ms": _timed(index.rank_files, questions)})


def _timed(search: Any, questions: Sequence[str]) -> list[float]:
    for q in questions[:WARMUP]:
        search(q)
    times = []
    for q in questions:
        started = time.perf_counter()
        search(q)
        times.append((time.perf_counter() - started) * 1000)
    return times


def summarise(runs: list[ChildResult], kinds: Sequence[str]) -> dict[str, Any]:
    """Per question kind (and `all`): medians over runs of p50, p95 and max."""
    good = [r for r in runs if r.out is not None]
    if not good:
        return {"ok": 0, "error": runs[-1].error if runs else "not run"}
    out: dict[str, Any] = {
        "ok": len(good),
        "build_s": round(median([(r.out or {})["build_seconds"] for r in good]), 2),
        "peak_rss_mb": round(median([float(r.peak_rss) for r in good]) / 1e6, 1),
    }
    for kind in ("all", *sorted(set(kinds))):
        per_run = [
            [t for t, k in zip((r.out or {})["times_ms"], kinds, strict=True) if kind in ("all", k)]
            for r in good
        ]
        out[kind] = {
            "queries": len(per_run[0]),
            "p50_ms": round(median([percentile(t, 0.5) for t in per_run]), 2),
            "p95_ms": round(median([percentile(t, 0.95) for t in per_run]), 2),
            "max_ms": round(median([max(t) for t in per_run]), 2),
        }
    return out


def measure_tree(
    name: str,
    tree: Path,
    questions: list[tuple[str, str]],
    systems: Sequence[str],
    args: argparse.Namespace,
) -> dict[str, Any]:
    warm(tree)
    scratch = Path(tempfile.mkdtemp(prefix="codecite-query-"))
    qfile = scratch / "questions.json"
    qfile.write_text(json.dumps(questions), encoding="utf-8")
    runs: dict[str, list[ChildResult]] = {s: [] for s in systems}
    try:
        for i in range(args.repeat):
            for system in systems:
                home = scratch / f"{system}-{i}"
                with tree_memory() as memory:  # every process of the run, workers included
                    result = run(
                        python_for(system, args.peer_python),
                        [__file__, "--child", system, str(tree), str(qfile), str(home)],
                        timeout=args.timeout,
                    )
                result = with_tree_memory(result, memory)
                runs[system].append(result)
                note = f"{result.wall:.1f}s" if result.out else result.error[:200]
                print(f"  {name} run {i + 1} {system}: {note}", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    kinds = [k for k, _ in questions]
    row: dict[str, Any] = {"tree": name, **{s: summarise(r, kinds) for s, r in runs.items()}}
    ours, peer = row.get("ours", {}), row.get("peer", {})
    if ours.get("ok") and peer.get("ok"):
        row["ratio"] = {"peak_rss_mb": ratio(ours["peak_rss_mb"], peer["peak_rss_mb"])}
        for kind in ("all", *sorted(set(kinds))):
            row["ratio"][kind] = {
                k: ratio(ours[kind][k], peer[kind][k]) for k in ("p50_ms", "p95_ms")
            }
    return row


COLUMNS = ("queries", "p50_ms", "p95_ms", "max_ms")


def render(rows: list[dict[str, Any]]) -> str:
    header = ["tree", "questions", "system", *COLUMNS, "build_s", "peak_rss_mb"]
    body: list[list[Any]] = []
    for row in rows:
        kinds = [
            k for k in row.get("ours", row.get("peer", {})) if isinstance(row["ours"].get(k), dict)
        ]
        for kind in kinds:
            for system in ("ours", "peer"):
                r = row.get(system, {})
                if kind in r:
                    extra = [r["build_s"], r["peak_rss_mb"]] if kind == "all" else [None, None]
                    body.append([row["tree"], kind, system, *(r[kind][c] for c in COLUMNS), *extra])
            if "ratio" in row:
                q = row["ratio"][kind]
                rss = row["ratio"]["peak_rss_mb"] if kind == "all" else None
                body.append([row["tree"], kind, "ours/peer", None, q["p50_ms"], q["p95_ms"]])
                body[-1] += [None, None, rss]
    return table(header, body)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = tree_parser("Search latency: codecite vs the LlamaIndex recipe.", __doc__)
    ap.add_argument("--queries", type=int, default=200, help="synthetic questions per tree")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--peer-python", type=Path, default=PEER_PYTHON)
    ap.add_argument("--timeout", type=float, default=1200.0, help="seconds per child run")
    ap.add_argument("--work", type=Path)
    ap.add_argument("--json", type=Path)
    return ap.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if len(argv) == 5 and argv[0] == "--child":
        (child_ours if argv[1] == "ours" else child_peer)(argv[2], argv[3], argv[4])
        return 0
    args = parse_args(argv)
    systems = ["ours"] if args.no_peer or not args.peer_python.exists() else ["ours", "peer"]
    specs = args.tree or ["stdlib"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="codecite-trees-") as scratch:
        for name, path in snapshots(specs, args.work or Path(scratch), args.clones).items():
            questions = [("synthetic", q) for q in synthetic_questions(path, args.queries)]
            questions += [("real", q) for q in case_questions(args.cases, name)]
            rows.append(measure_tree(name, path, questions, systems, args))
    print(render(rows))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
