"""What history costs: a first ingest with and without it, and a one-commit re-ingest.

    .venv/bin/python bench/history.py --clones /work/.mirror --tree pallets/flask \
        --tree pytest-dev/pytest --tree sympy/sympy --repeat 1

Each run is a child process with a fresh data directory (embedded index, no keys) over
a local clone; `peak_rss_mb` is the child's own peak (ru_maxrss). The one-commit
re-ingest indexes the tree's parent commit first (a worktree-free copy via `git clone
--shared`), then the tip. Code-question latency: the same questions, with and without a
recorded history, p50 over repeats. Machine noise: report `uptime` beside the figures.
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

QUESTIONS = (
    "how are requests routed to views?",
    "where is the config loaded?",
    "how is output captured?",
)


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
    started = time.perf_counter()
    report = core.index_repo(source, name=name, history=options)
    out["seconds"] = time.perf_counter() - started
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
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    core.close()
    return out


def run(source: Path, name: str, history: bool, parent_first: bool) -> dict[str, float]:
    home = Path(tempfile.mkdtemp(prefix="h25-bench-"))
    work = home / "src"
    subprocess.run(["git", "clone", "-q", "--shared", str(source), str(work)], check=True)
    env = {**os.environ, "CODECITE_HOME": str(home / "home")}
    root = str(Path(__file__).resolve().parents[1])
    call = f"child({str(work)!r}, {name!r}, {history!r}, {parent_first!r})"
    code = f"import json,sys; sys.path.insert(0, {root!r}); from bench.history import child; "
    code += f"print(json.dumps({call}))"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    shutil.rmtree(home, ignore_errors=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clones", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--tree", action="append", required=True)
    parser.add_argument(
        "--reingest", default="sympy/sympy", help="the tree of the one-commit re-ingest"
    )
    args = parser.parse_args()
    print(f"load: {os.getloadavg()}")
    for tree in args.tree:
        source = args.clones / tree.replace("/", "+") / "repo"
        name = tree.split("/")[-1]
        without = run(source, name, False, False)
        with_history = run(source, name, True, False)
        ratio = with_history["seconds"] / without["seconds"]
        print(
            json.dumps(
                {
                    "tree": tree,
                    "without": without,
                    "with": with_history,
                    "time_ratio": round(ratio, 2),
                }
            )
        )
        if tree == args.reingest:
            one = run(source, name, True, True)
            base = run(source, name, False, True)
            print(json.dumps({"tree": tree, "one_commit_reingest": {"with": one, "without": base}}))
    print(f"load: {os.getloadavg()}")


if __name__ == "__main__":
    main()
