"""A scheduler's resident memory across an ingest, beside a baseline (issue 27 item 10).

    .venv/bin/python bench/scheduler_memory.py --baseline /work/main/.venv/bin/codecite \
        --repo /tmp/jinja --out bench/results/scheduler_memory.json

Each system (a `codecite` console script in its own venv) runs `codecite schedule` over a
data directory of its own with `--repo` configured; the boot pass indexes it at once.
The scheduler process's VmRSS (its own, not its children's) is sampled every 0.1 s:
`idle_mb` is the largest sample before the ingest begins (the process has started and
scheduled the repository), `peak_mb` the largest while it runs, `after_mb` the median of
the samples in the `--settle` seconds after it ended (the run's "indexed ..." line), and
`kept_mb` = after - idle. The systems run one after the other, `--runs` times each,
alternating; medians are reported. The load average is read before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import MODEL_ENV, ROOT, median

SAMPLE_SECONDS = 0.1


def rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def one_run(script: Path, repo: Path, settle: float, timeout: float) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="codecite-schedmem-") as scratch:
        home = Path(scratch) / "home"
        home.mkdir()
        (home / "codecite.toml").write_text(
            f'[[repos]]\nname = "bench"\npath = "{repo}"\n', encoding="utf-8"
        )
        env = {k: v for k, v in os.environ.items() if k not in (*MODEL_ENV, "PYTHONPATH")}
        env["CODECITE_HOME"] = str(home)
        proc = subprocess.Popen(
            [str(script), "schedule"],
            env=env,
            cwd=tempfile.gettempdir(),
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
        )
        began, ended = threading.Event(), threading.Event()

        def watch() -> None:
            assert proc.stderr is not None
            for line in proc.stderr:
                if "boot: indexing bench" in line:
                    began.set()
                if "indexed bench@" in line or "ingest of bench failed" in line:
                    ended.set()

        threading.Thread(target=watch, daemon=True).start()
        samples: list[tuple[str, float]] = []
        deadline = time.monotonic() + timeout
        settled_at: float | None = None
        try:
            while time.monotonic() < deadline and proc.poll() is None:
                value = rss_mb(proc.pid)
                phase = "after" if ended.is_set() else "during" if began.is_set() else "idle"
                if value is not None:
                    samples.append((phase, value))
                if ended.is_set():
                    settled_at = settled_at or time.monotonic() + settle
                    if time.monotonic() >= settled_at:
                        break
                time.sleep(SAMPLE_SECONDS)
        finally:
            proc.terminate()
            proc.wait(timeout=60)
        if not ended.is_set():
            raise SystemExit(f"{script}: the ingest did not end within {timeout} s")
    idle = max([v for p, v in samples if p == "idle"] or [0.0])
    peak = max([v for p, v in samples if p != "after"] or [0.0])
    after = median([v for p, v in samples if p == "after"])
    return {"idle_mb": idle, "peak_mb": peak, "after_mb": after, "kept_mb": after - idle}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="its `codecite` script")
    parser.add_argument("--candidate", type=Path, default=ROOT / ".venv" / "bin" / "codecite")
    parser.add_argument("--repo", type=Path, required=True, help="a git repository to index")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--settle", type=float, default=5.0)
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    systems = {"baseline": args.baseline, "candidate": args.candidate}
    result: dict[str, Any] = {"load_before": os.getloadavg(), "runs": args.runs}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in systems}
    for _ in range(args.runs):
        for name, script in systems.items():
            row = one_run(script, args.repo.resolve(), args.settle, args.timeout)
            runs[name].append(row)
            print(name, json.dumps({k: round(v, 1) for k, v in row.items()}), flush=True)
    for name in systems:
        result[name] = {
            key: round(median([r[key] for r in runs[name]]), 1) for key in runs[name][0]
        }
    result["load_after"] = os.getloadavg()
    print(json.dumps({name: result[name] for name in systems}))
    print("load average before", result["load_before"], "after", result["load_after"])
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
