"""Indexing speed and memory: files/s, chunks/s, index bytes, peak RSS, per tree.

    .venv/bin/python bench/ingest.py                      # this repository and the stdlib
    .venv/bin/python bench/ingest.py --tree flask=/path/to/flask --repeat 3

Each run indexes into a fresh data directory in a child process, so peak RSS
is that process's alone. Medians over --repeat runs are reported.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import default_trees, dir_bytes, median, parse_trees, run_child


def child(path: str, home: str) -> None:
    import os

    os.environ["CODECITE_HOME"] = home
    from bot.config import FileConfig, Settings
    from bot.core import Core

    core = Core.from_settings(Settings(), FileConfig())
    report = core.index_repo(path, name="bench")
    core.close()
    print(json.dumps({"files": report.files, "chunks": report.chunks, "skipped": report.skipped}))


def measure(path: Path, repeat: int) -> dict[str, float]:
    runs = []
    for _ in range(repeat):
        home = Path(tempfile.mkdtemp(prefix="codecite-bench-"))
        try:
            out, seconds, rss = run_child([__file__, "--child", str(path), str(home)])
            runs.append((out, seconds, rss, dir_bytes(home)))
        finally:
            shutil.rmtree(home, ignore_errors=True)
    out = runs[0][0]
    seconds = median([r[1] for r in runs])
    return {
        "files": out["files"],
        "chunks": out["chunks"],
        "seconds": seconds,
        "files_per_s": out["files"] / seconds,
        "chunks_per_s": out["chunks"] / seconds,
        "index_mb": median([r[3] for r in runs]) / 1e6,
        "peak_rss_mb": median([r[2] for r in runs]) / 1e6,
    }


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", action="append", default=[], help="NAME=PATH (repeatable)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", help="write results here")
    args = ap.parse_args()
    trees = parse_trees(args.tree) if args.tree else default_trees()
    results = {name: measure(path, args.repeat) for name, path in trees.items()}
    cols = ["files", "chunks", "seconds", "files_per_s", "chunks_per_s", "index_mb", "peak_rss_mb"]
    print(f"{'tree':12s} " + " ".join(f"{c:>12s}" for c in cols))
    for name, r in results.items():
        print(f"{name:12s} " + " ".join(f"{r[c]:12.1f}" for c in cols))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
