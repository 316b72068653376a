"""Search latency p50/p95 on an index of a real tree (in process, warm, no network).

    .venv/bin/python bench/query.py                 # the stdlib
    .venv/bin/python bench/query.py --tree /path/to/pylint --queries 300

Questions are built from the tree itself: symbol names in natural phrasing,
dotted names, file names and plain-English questions, so every kind of
query analysis is exercised.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import default_trees, median, parse_trees, percentile

TEMPLATES = (
    "how does {sym} work?",
    "where is {sym} defined",
    "what calls {sym} and why",
    "explain the {words} logic",
    "why would {sym} raise an error when the input is empty?",
    "{path}",
)


def questions(core, n: int, seed: int = 1) -> list[str]:
    rnd = random.Random(seed)
    chunks = []
    for state in core.index.repo_states():
        for path in list(core.index.manifest(state.name))[:4000]:
            chunks.append(path)
    rnd.shuffle(chunks)
    out = []
    for path in chunks:
        if len(out) >= n:
            break
        file_chunks = core.index.chunks_of("bench", path)
        named = [c for c in file_chunks if c.symbol]
        if not named:
            continue
        c = rnd.choice(named)
        words = " ".join(c.symbol.replace("_", " ").replace(".", " ").split()[:3])
        out.append(rnd.choice(TEMPLATES).format(sym=c.symbol, words=words, path=path))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", action="append", default=[], help="NAME=PATH")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--top-k", type=int, default=10)
    args = ap.parse_args()
    trees = parse_trees(args.tree) if args.tree else {"stdlib": default_trees()["stdlib"]}
    for name, path in trees.items():
        home = tempfile.mkdtemp(prefix="codecite-query-")
        os.environ["CODECITE_HOME"] = home
        from bot.config import FileConfig, Settings
        from bot.core import CLI, Core

        core = Core.from_settings(Settings(), FileConfig())
        core.index_repo(str(path), name="bench")
        qs = questions(core, args.queries)
        for q in qs[:10]:  # warm caches
            core.search(q, CLI, top_k=args.top_k)
        times = []
        for q in qs:
            t = time.perf_counter()
            core.search(q, CLI, top_k=args.top_k)
            times.append((time.perf_counter() - t) * 1000)
        row = {
            "tree": name,
            "queries": len(qs),
            "p50_ms": round(median(times), 2),
            "p95_ms": round(percentile(times, 0.95), 2),
            "max_ms": round(max(times), 2),
        }
        print(json.dumps(row))
        core.close()


if __name__ == "__main__":
    main()
