"""What history costs: a first ingest with and without it, and a one-commit re-ingest,
this checkout beside another (e.g. main) in one run.

    git worktree add /tmp/main-checkout <commit>
    .venv/bin/python bench/history.py --clones /work/.mirror --tree pallets/flask \\
        --tree pytest-dev/pytest --tree sympy/sympy --repeat 3 --peer /tmp/main-checkout

Each run is a child process with a fresh data directory (embedded index, no keys) over
a local clone (`git clone --shared`), importing `bot` from its checkout (this one,
"ours", or `--peer`'s, "peer"). Per round the runs alternate ours/peer, without/with
history, so machine noise hits all alike; medians over `--repeat` rounds. `seconds` is
the whole `index_repo` call, `cpu_seconds` the CPU it took (the child's and that of the
processes it waited for: git, ingest workers; steadier than wall time on a shared
machine), `history_seconds` its history step; `peak_rss_mb` is the
largest single process of the run (the child, or an ingest worker it waited for). The
one-commit re-ingest (`--reingest`, sympy by default) indexes the tree's parent commit
first, then the tip; its figures are the tip's. `answer_p50_ms`: three code questions,
three times each, after the ingest. Machine noise: report `uptime` beside the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import median  # noqa: E402

QUESTIONS = (
    "how are requests routed to views?",
    "where is the config loaded?",
    "how is output captured?",
)
FIGURES = ("seconds", "cpu_seconds", "history_seconds", "peak_rss_mb", "answer_p50_ms", "commits")


def child(source: str, name: str, history: bool, parent_first: bool) -> dict[str, float]:
    from bot.config import FileConfig, Settings
    from bot.core import CLI, Core
    from bot.ingest.history import HistoryOptions

    options = HistoryOptions(enabled=history)
    core = Core.from_settings(Settings(), FileConfig())
    out: dict[str, float] = {}
    if parent_first:
        subprocess.run(["git", "-C", source, "checkout", "-q", "--detach", "HEAD~1"], check=True)
        core.index_repo(source, name=name, history=options)
        subprocess.run(["git", "-C", source, "checkout", "-q", "--detach", "-"], check=True)
    started, cpu = time.perf_counter(), _cpu()
    report = core.index_repo(source, name=name, history=options)
    out["seconds"] = time.perf_counter() - started
    out["cpu_seconds"] = _cpu() - cpu
    out["history_seconds"] = report.history.seconds if report.history else 0.0
    out["commits"] = float(report.history.commits if report.history else 0)
    latencies = []
    for _ in range(3):
        for q in QUESTIONS:
            t = time.perf_counter()
            core.ask(q, CLI)
            latencies.append(time.perf_counter() - t)
    latencies.sort()
    out["answer_p50_ms"] = 1000 * latencies[len(latencies) // 2]
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    out["peak_rss_mb"] = max(own, workers) / 1024
    core.close()
    return out


def _cpu() -> float:
    """CPU seconds of this process and of the children it has waited for (git, workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    waited = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + waited.ru_utime + waited.ru_stime


def run(
    checkout: Path, source: Path, name: str, history: bool, parent_first: bool
) -> dict[str, float]:
    home = Path(tempfile.mkdtemp(prefix="codecite-history-bench-"))
    try:
        work = home / "src"
        subprocess.run(["git", "clone", "-q", "--shared", str(source), str(work)], check=True)
        env = {**os.environ, "CODECITE_HOME": str(home / "home")}
        call = f"child({str(work)!r}, {name!r}, {history!r}, {parent_first!r})"
        # `bot` from the checkout measured, this file's `child` (imported by its path)
        code = (
            f"import json, sys, importlib.util; sys.path.insert(0, {str(checkout)!r}); "
            f"import bot; assert bot.__file__.startswith({str(checkout)!r}), bot.__file__; "
            f"spec = importlib.util.spec_from_file_location('history_bench', {__file__!r}); "
            "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module); "
            f"print(json.dumps(module.{call}))"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise SystemExit(f"{checkout} on {name} failed:\n{done.stderr[-3000:]}")
        result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
        return result
    finally:
        shutil.rmtree(home, ignore_errors=True)


def medians(runs: Sequence[dict[str, float]]) -> dict[str, float]:
    return {k: round(median([r[k] for r in runs]), 3) for k in FIGURES}


def measure(
    systems: dict[str, Path], source: Path, name: str, repeat: int, parent_first: bool
) -> dict[str, dict[str, dict[str, float]]]:
    """system -> without/with -> median figures (and the ratio with/without)."""
    runs: dict[tuple[str, bool], list[dict[str, float]]] = {}
    for _ in range(repeat):
        for system, checkout in systems.items():
            for history in (False, True):
                got = run(checkout, source, name, history, parent_first)
                runs.setdefault((system, history), []).append(got)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for system in systems:
        without, with_history = medians(runs[(system, False)]), medians(runs[(system, True)])
        out[system] = {
            "without": without,
            "with": with_history,
            "ratio": {
                "time": round(with_history["seconds"] / without["seconds"], 2),
                "cpu": round(with_history["cpu_seconds"] / without["cpu_seconds"], 2),
                "peak_rss": round(with_history["peak_rss_mb"] / without["peak_rss_mb"], 2),
            },
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clones", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--tree", action="append", required=True)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--peer", type=Path, help="another checkout, run beside this one")
    parser.add_argument(
        "--reingest", default="sympy/sympy", help="the tree of the one-commit re-ingest"
    )
    parser.add_argument("--no-first", action="store_true", help="only the one-commit re-ingest")
    args = parser.parse_args()
    systems = {"ours": ROOT, **({"peer": args.peer.resolve()} if args.peer else {})}
    print(json.dumps({"load": os.getloadavg(), "systems": {k: str(v) for k, v in systems.items()}}))
    for tree in args.tree:
        source = args.clones / tree.replace("/", "+") / "repo"
        name = tree.split("/")[-1]
        if not args.no_first:
            found = measure(systems, source, name, args.repeat, False)
            print(json.dumps({"tree": tree, "first_ingest": found, "load": os.getloadavg()}))
        if tree == args.reingest:
            found = measure(systems, source, name, args.repeat, True)
            print(json.dumps({"tree": tree, "one_commit_reingest": found}))
    print(json.dumps({"load": os.getloadavg()}))


if __name__ == "__main__":
    main()
