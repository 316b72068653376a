"""Shared helpers for benchmarks: trees to measure, child processes, percentiles."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import sysconfig
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def default_trees() -> dict[str, Path]:
    return {"codecite": ROOT, "stdlib": Path(sysconfig.get_paths()["stdlib"])}


def parse_trees(specs: Sequence[str]) -> dict[str, Path]:
    """`NAME=PATH` pairs; a bare path is named after its directory."""
    trees: dict[str, Path] = {}
    for spec in specs:
        name, _, path = spec.rpartition("=")
        p = Path(path).resolve()
        trees[name or p.name] = p
    return trees


def run_child(args: Sequence[str], env: dict[str, str] | None = None) -> tuple[dict, float, int]:
    """Run a Python child that prints one JSON line; return (json, seconds, peak RSS bytes)."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=ROOT,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    out = proc.stdout.read() if proc.stdout else ""
    err = proc.stderr.read() if proc.stderr else ""
    if status != 0:
        raise RuntimeError(f"child failed ({status}): {err.strip()[-2000:]}")
    last = [line for line in out.splitlines() if line.startswith("{")][-1]
    return json.loads(last), seconds, usage.ru_maxrss * 1024


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else 0.0


def dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
