"""Indexing speed and memory, codecite beside the LlamaIndex recipe, on real trees.

    .venv/bin/python bench/ingest.py                          # this repository and the stdlib
    .venv/bin/python bench/ingest.py --tree pylint-dev/pylint --clones /work/.mirror --repeat 5
    .venv/bin/python bench/ingest.py --tree NAME=/some/dir --no-peer
    CODECITE_INGEST_WORKERS=1 .venv/bin/python bench/ingest.py ...  # codecite in one process

For each tree: files/s, chunks/s, index bytes and peak RSS, for codecite (a
fresh data directory, embedded index, no API keys) and for the peer
(SimpleDirectoryReader -> CodeSplitter/SentenceSplitter -> BM25Retriever,
persisted to disk; run with .venv-bench/bin/python). Each run is its own child
process; runs alternate ours, peer, ours, peer... so machine noise hits both
alike; medians over --repeat runs and ratios ours/peer are reported.
`seconds` is the indexing work inside the child (imports excluded; they are in
`wall`). A peer run longer than --peer-timeout is stopped and reported as such.

Peak memory counts every process of a run: `os.wait4` gives the largest single
process (a waited-for grandchild's peak is folded in as a maximum, not added),
so `TreeMemory` also samples the summed RSS and PSS of all the run's processes (codecite's
ingest workers and multiprocessing's resource tracker included)
every 50 ms; `peak_rss_mb` is the larger of the two. PSS splits pages shared
between processes (libraries, a worker's copy of the interpreter) among them.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import (
    PEER_PYTHON,
    ChildResult,
    dir_bytes,
    emit,
    median,
    python_for,
    ratio,
    run_child,
)
from bench.report import table
from bench.trees import snapshots, tree_stats, warm

SYSTEMS = ("ours", "peer")
SAMPLE_SECONDS = 0.05
PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass
class TreeMemory:
    """Peak summed RSS and PSS (bytes) of this process's descendants, sampled."""

    rss: int = 0
    pss: int = 0
    samples: int = 0

    def sample(self) -> None:
        rss = pss = 0
        for pid in _descendants(os.getpid()):
            rss += _rss(pid)
            pss += _pss(pid)
        self.rss, self.pss = max(self.rss, rss), max(self.pss, pss)
        self.samples += 1


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_bytes()
            except OSError:
                continue  # exited meanwhile
            ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
            children.setdefault(ppid, []).append(int(name))
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _rss(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


def _pss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    return 0


@contextmanager
def tree_memory() -> Iterator[TreeMemory]:
    """Sample the descendants' memory until the block ends (no-op without /proc)."""
    peak = TreeMemory()
    if not Path("/proc/self/stat").exists():
        yield peak
        return
    done = threading.Event()

    def loop() -> None:
        while not done.wait(SAMPLE_SECONDS):
            peak.sample()

    sampler = threading.Thread(target=loop, name="tree-memory", daemon=True)
    sampler.start()
    try:
        yield peak
    finally:
        done.set()
        sampler.join()


def child_ours(tree: str, home: str) -> None:
    os.environ["CODECITE_HOME"] = home
    from bot.config import FileConfig, Settings
    from bot.core import Core

    core = Core.from_settings(Settings(), FileConfig())
    started = time.perf_counter()
    report = core.index_repo(tree, name="bench")
    seconds = time.perf_counter() - started
    core.close()
    emit(
        {
            "files": report.files,
            "chunks": report.chunks,
            "seconds": seconds,
            "index_bytes": dir_bytes(Path(home)),
        }
    )


def child_peer(tree: str, out: str) -> None:
    from bench.peer import PeerIndex, load_documents, offline_env, split_documents

    offline_env()
    # Imports are not indexing time: load the recipe's modules before the clock starts.
    for module in ("llama_index.core.node_parser", "llama_index.retrievers.bm25"):
        importlib.import_module(module)

    started = time.perf_counter()
    nodes, stats = split_documents(load_documents(Path(tree)))
    index = PeerIndex(Path(tree), nodes)
    index.persist(Path(out))
    seconds = time.perf_counter() - started
    emit(
        {
            "files": stats.documents,
            "chunks": stats.nodes,
            "code_fallbacks": stats.code_fallbacks,
            "seconds": seconds,
            "index_bytes": dir_bytes(Path(out)),
        }
    )


def measure_once(system: str, tree: Path, args: argparse.Namespace) -> ChildResult:
    scratch = Path(tempfile.mkdtemp(prefix=f"codecite-bench-{system}-"))
    try:
        with tree_memory() as memory:
            result = run_child(
                python_for(system, args.peer_python),
                [__file__, "--child", system, str(tree), str(scratch)],
                timeout=args.peer_timeout if system == "peer" else args.timeout,
            )
        return with_tree_memory(result, memory)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def with_tree_memory(result: ChildResult, memory: TreeMemory) -> ChildResult:
    """The run's peak RSS over all its processes, and their summed PSS in its output."""
    peak = max(result.peak_rss, memory.rss)
    out = None if result.out is None else {**result.out, "tree_pss": memory.pss}
    return ChildResult(out, result.wall, peak, result.timed_out, result.error)


def summarise(runs: list[ChildResult]) -> dict[str, Any]:
    good = [r for r in runs if r.out is not None]
    if not good:
        return {"runs": len(runs), "ok": 0, "error": runs[-1].error if runs else "not run"}
    out = good[0].out or {}
    seconds = median([float((r.out or {})["seconds"]) for r in good])
    return {
        "runs": len(runs),
        "ok": len(good),
        "files": out["files"],
        "chunks": out["chunks"],
        "seconds": round(seconds, 3),
        "wall": round(median([r.wall for r in good]), 3),
        "files_per_s": round(out["files"] / seconds, 1) if seconds else None,
        "chunks_per_s": round(out["chunks"] / seconds, 1) if seconds else None,
        "index_mb": round(median([float((r.out or {})["index_bytes"]) for r in good]) / 1e6, 2),
        "peak_rss_mb": round(median([float(r.peak_rss) for r in good]) / 1e6, 1),
        "peak_pss_mb": round(
            median([float((r.out or {}).get("tree_pss", 0)) for r in good]) / 1e6, 1
        ),
        "all_seconds": [round(float((r.out or {})["seconds"]), 3) for r in good],
        **({"code_fallbacks": out["code_fallbacks"]} if "code_fallbacks" in out else {}),
        **({"error": runs[-1].error} if len(good) < len(runs) else {}),
    }


def measure_tree(
    name: str, tree: Path, systems: Sequence[str], args: argparse.Namespace
) -> dict[str, Any]:
    warm(tree)
    runs: dict[str, list[ChildResult]] = {s: [] for s in systems}
    for i in range(args.repeat):
        for system in systems:
            if runs[system] and runs[system][-1].timed_out:
                continue  # a peer that timed out once will again; do not burn the machine
            result = measure_once(system, tree, args)
            runs[system].append(result)
            took = f"{result.wall:.1f}s" if result.out else result.error[:200]
            print(f"  {name} run {i + 1} {system}: {took}", file=sys.stderr, flush=True)
    row: dict[str, Any] = {"tree": name, **tree_stats(tree)}
    row.update({s: summarise(r) for s, r in runs.items()})
    ours, peer = row.get("ours", {}), row.get("peer", {})
    if ours.get("ok") and peer.get("ok"):
        row["ratio"] = {
            k: ratio(ours[k], peer[k])
            for k in ("seconds", "peak_rss_mb", "peak_pss_mb", "index_mb", "wall")
        }
    return row


COLUMNS = (
    "files",
    "chunks",
    "seconds",
    "files_per_s",
    "chunks_per_s",
    "index_mb",
    "peak_rss_mb",
    "peak_pss_mb",
)


def render(rows: list[dict[str, Any]]) -> str:
    header = ["tree", "system", *COLUMNS]
    body: list[list[Any]] = []
    for row in rows:
        for system in SYSTEMS:
            r = row.get(system)
            if r is None:
                continue
            if not r.get("ok"):
                body.append([row["tree"], system, r.get("error", "failed")[:60]])
                body[-1] += [None] * (len(header) - 3)
                continue
            body.append([row["tree"], system, *(r[c] for c in COLUMNS)])
        if "ratio" in row:
            q = row["ratio"]
            body.append([row["tree"], "ours/peer", None, None, q["seconds"], None, None])
            body[-1] += [q["index_mb"], q["peak_rss_mb"], q["peak_pss_mb"]]
    return table(header, body)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description="Indexing speed and memory: codecite vs the LlamaIndex recipe.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__,
    )
    ap.add_argument("--tree", action="append", default=[], help="tree spec (see bench/trees.py)")
    ap.add_argument("--clones", type=Path, help="local clones for owner/name trees")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-peer", action="store_true", help="measure codecite only")
    ap.add_argument("--peer-python", type=Path, default=PEER_PYTHON)
    ap.add_argument("--peer-timeout", type=float, default=900.0, help="seconds per peer run")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per codecite run")
    ap.add_argument("--work", type=Path, help="where tree copies go (default: a temp dir)")
    ap.add_argument("--json", type=Path, help="write results here")
    return ap.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if len(argv) == 4 and argv[0] == "--child":
        (child_ours if argv[1] == "ours" else child_peer)(argv[2], argv[3])
        return 0
    args = parse_args(argv)
    systems = ["ours"] if args.no_peer or not args.peer_python.exists() else list(SYSTEMS)
    if "peer" not in systems and not args.no_peer:
        print(f"note: no peer venv at {args.peer_python}; codecite only", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="codecite-trees-") as scratch:
        trees = snapshots(args.tree, args.work or Path(scratch), args.clones)
        rows = [measure_tree(name, path, systems, args) for name, path in trees.items()]
    print(render(rows))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
