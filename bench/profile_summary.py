"""Where the time goes: the top functions of a profile, as shares of the whole.

    .venv/bin/python bench/profile_summary.py bench/results/scale-prof/warm-search.prof
    .venv/bin/python bench/profile_summary.py bench/results/scale-prof/cold-search.spy.txt

A `.prof` file is cProfile's (pstats): `inclusive` is cumulative time, `self` is time
in the function's own code, both as a share of the profile's total. Any other file is
py-spy's raw (collapsed-stack) output, one `frame;frame;... count` line per stack: a
sampling profile, so small functions are not inflated by the profiler's own cost (use
it for a cold start); a function's inclusive share counts each sample once however
often the function recurs in its stack.
"""

from __future__ import annotations

import argparse
import pstats
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path


def from_pstats(path: Path) -> tuple[Counter[str], Counter[str], float]:
    stats = pstats.Stats(str(path))
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    for (file, line, name), (_cc, _nc, tottime, cumtime, _) in stats.stats.items():  # type: ignore[attr-defined]
        key = f"{name} ({_short(file)}:{line})"
        inclusive[key] += cumtime
        own[key] += tottime
    return inclusive, own, float(stats.total_tt)  # type: ignore[attr-defined]


def from_collapsed(path: Path) -> tuple[Counter[str], Counter[str], float]:
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    total = 0
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = [_frame(f) for f in stack.split(";")]
        total += int(count)
        own[frames[-1]] += int(count)
        for frame in set(frames):
            inclusive[frame] += int(count)
    return inclusive, own, float(total)


def _frame(raw: str) -> str:
    """`name (path/to/file.py:123)` -> `name (file.py)`: lines differ sample to sample."""
    name, _, where = raw.partition(" (")
    return f"{name} ({_short(where.rstrip(')').rpartition(':')[0])})"


def _short(file: str) -> str:
    parts = Path(file).parts
    for anchor in ("bot", "adapters", "bench", "site-packages"):
        if anchor in parts:
            return "/".join(parts[parts.index(anchor) + (anchor == "site-packages") :])
    return Path(file).name


def summary(path: Path, top: int) -> str:
    reader = from_pstats if path.suffix == ".prof" else from_collapsed
    inclusive, own, total = reader(path)
    unit = "s" if path.suffix == ".prof" else "samples"
    lines = [f"{path.name}: total {total:.3f} {unit}"]
    for title, counts in (("inclusive", inclusive), ("self", own)):
        lines.append(f"  top {top} by {title} share")
        for key, value in counts.most_common(top):
            lines.append(f"    {100 * value / total:5.1f}%  {key}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("profile", type=Path, nargs="+")
    ap.add_argument("--top", type=int, default=20)
    args = ap.parse_args(argv)
    for path in args.profile:
        if not path.is_file():
            print(f"error: no profile at {path}", file=sys.stderr)
            return 2
        print(summary(path, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
