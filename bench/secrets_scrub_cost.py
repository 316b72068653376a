"""The scrubber's own cost: CPU seconds to scrub every text file of a tree, old beside new.

    PYTHONPATH=. .venv/bin/python bench/secrets_scrub_cost.py --baseline 120c378 \\
        /root/.pyenv/versions/3.11.7/lib/python3.11 /tmp/sympy

Each tree's files are read once; then, in a child process per variant (the
baseline commit's `bot` from `git archive`, and this tree), `scrub` runs over
all of them, three times alternating, and the best CPU time (`process_time`,
steadier than wall time on a loaded machine) is reported with the ratio. The
first scrub of a process (which loads the maintained rules) is timed apart.
Compare with the whole ingest's time (`bench/ingest.py`) to read the share.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def child(tree: str, folder: str) -> None:
    sys.path.insert(0, tree)
    from bench.secrets_eval import text_files
    from bot.ingest.secrets import scrub

    started = time.process_time()
    scrub("warm up: token = 'x'\n", "a.py")
    first = time.process_time() - started
    files = text_files(Path(folder))
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        for path, text in files:
            scrub(text, path)
        best = min(best, time.process_time() - started)
    size = sum(len(t) for _, t in files)
    print(json.dumps({"files": len(files), "mb": size / 1e6, "seconds": best, "first": first}))


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        child(sys.argv[2], sys.argv[3])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", default="120c378")
    parser.add_argument("trees", nargs="+")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="codecite-scrub-cost-") as scratch:
        old = Path(scratch) / "old"
        old.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", args.baseline, "bot"],
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        for folder in args.trees:
            rows = {}
            for name, tree in ((f"main@{args.baseline}", old), ("this tree", ROOT)):
                env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), str(ROOT)])}
                done = subprocess.run(
                    [sys.executable, __file__, "child", str(tree), folder],
                    env=env, capture_output=True, text=True, check=True,
                )  # fmt: skip
                rows[name] = json.loads(done.stdout.strip().splitlines()[-1])
            base = next(iter(rows.values()))["seconds"]
            for name, row in rows.items():
                print(
                    f"{folder}: {name}: {row['files']} files, {row['mb']:.1f} MB, "
                    f"scrub {row['seconds']:.2f}s CPU ({row['seconds'] / base:.2f}x), "
                    f"first scrub {row['first']:.2f}s; load {os.getloadavg()[0]:.1f}"
                )


if __name__ == "__main__":
    main()
