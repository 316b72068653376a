"""Start-up of the `codecite` command: this checkout beside a baseline checkout (issue 17).

    .venv/bin/python bench/startup.py --baseline /work/main/.venv/bin/codecite \
        --tree /tmp/requests --runs 10 --out bench/results/startup.json

Each system is a `codecite` console script (its own venv and checkout). Both index
`--tree` into data directories of their own first; then, for each command, the two
run alternately, `--runs` times each, with no API keys: `--help`, `search --help`,
`status` in a fresh data directory (also with an OpenAI key set: a model configured but
not asked), `status` and `search` over the index. Reported:
median wall seconds and the ratio to the baseline; from `--import-runs` (3) runs under
`-X importtime`, also alternating, the median seconds spent importing (top-level rows)
and their share of that run's wall; and which heavy packages the command loaded. The
load average is read before and after: on a busy machine read the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import MODEL_ENV, ROOT, median, ratio

HEAVY = (
    "slack_bolt",
    "slack_sdk",
    "discord",
    "aiohttp",
    "pinecone",
    "openai",
    "psycopg",
    "apscheduler",
    "tree_sitter",
    "numpy",
    "pydantic",
)
QUESTION = "how are redirects followed"
# Top-level rows of `-X importtime`: "import time: self | cumulative | name", no indent.
_TOP = re.compile(r"import time:\s+\d+ \|\s+(\d+) \| (\S+)$")


# A model configured but never asked (status only names it); nothing listens there.
KEYS = {"OPENAI_API_KEY": "sk-bench-unused", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}


def commands(fresh: Path, indexed: Path) -> dict[str, tuple[Path, list[str], dict[str, str]]]:
    return {
        "--help": (fresh, ["--help"], {}),
        "search --help": (fresh, ["search", "--help"], {}),
        "status (fresh)": (fresh, ["status"], {}),
        "status (fresh, OPENAI_API_KEY set)": (fresh, ["status"], KEYS),
        "status (indexed)": (indexed, ["status"], {}),
        "search": (indexed, ["search", QUESTION], {}),
    }


def env_for(home: Path, extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in (*MODEL_ENV, "PYTHONPATH")}
    env["CODECITE_HOME"] = str(home)
    env.update(extra)
    return env


def run(
    script: Path,
    home: Path,
    args: Sequence[str],
    extra: dict[str, str] | None = None,
    *,
    importtime: bool = False,
) -> Any:
    python = script.parent / "python"
    flags = ["-X", "importtime"] if importtime else []
    started = time.perf_counter()
    done = subprocess.run(
        [str(python), *flags, str(script), *args],
        capture_output=True,
        text=True,
        env=env_for(home, extra or {}),
        cwd=tempfile.gettempdir(),  # neither checkout on sys.path but through its venv
        timeout=300,
        check=False,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{script} {' '.join(args)} failed: {done.stderr[-800:]}")
    return wall, done.stderr


def import_profile(
    script: Path, home: Path, args: Sequence[str], extra: dict[str, str]
) -> dict[str, Any]:
    wall, stderr = run(script, home, args, extra, importtime=True)
    seconds, packages = 0.0, set()
    for line in stderr.splitlines():
        match = _TOP.match(line)
        if match:
            seconds += int(match.group(1)) / 1e6
            packages.add(match.group(2).partition(".")[0])
    for line in stderr.splitlines():  # nested rows name the heavy packages too
        name = line.rpartition("|")[2].strip()
        if name.partition(".")[0] in HEAVY:
            packages.add(name.partition(".")[0])
    return {
        "import_s": round(seconds, 3),
        "import_share": round(seconds / wall, 3),
        "heavy": sorted(packages & set(HEAVY)),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="its `codecite` script")
    parser.add_argument("--candidate", type=Path, default=ROOT / ".venv" / "bin" / "codecite")
    parser.add_argument("--tree", type=Path, required=True, help="a directory to index")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--import-runs", type=int, default=3, help="-X importtime runs")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    systems = {"baseline": args.baseline, "candidate": args.candidate}
    result: dict[str, Any] = {"load_before": os.getloadavg(), "runs": args.runs, "commands": {}}
    with tempfile.TemporaryDirectory(prefix="codecite-startup-") as scratch:
        homes: dict[str, dict[str, tuple[Path, list[str], dict[str, str]]]] = {}
        for name, script in systems.items():
            fresh, indexed = Path(scratch) / name / "fresh", Path(scratch) / name / "indexed"
            run(script, indexed, ["index", str(args.tree), "--name", "tree"])
            homes[name] = commands(fresh, indexed)
        for command in commands(Path(), Path()):
            walls: dict[str, list[float]] = {name: [] for name in systems}
            for _ in range(args.runs):  # alternate, so both see the same load
                for name, script in systems.items():
                    home, cmd, extra = homes[name][command]
                    walls[name].append(run(script, home, cmd, extra)[0])
            profiles: dict[str, list[dict[str, Any]]] = {name: [] for name in systems}
            for _ in range(args.import_runs):
                for name, script in systems.items():
                    home, cmd, extra = homes[name][command]
                    profiles[name].append(import_profile(script, home, cmd, extra))
            row: dict[str, Any] = {}
            for name in systems:
                row[name] = {
                    "median_s": round(median(walls[name]), 3),
                    "import_s": round(median([p["import_s"] for p in profiles[name]]), 3),
                    "import_share": round(median([p["import_share"] for p in profiles[name]]), 3),
                    "heavy": profiles[name][0]["heavy"],
                }
            row["ratio"] = ratio(row["candidate"]["median_s"], row["baseline"]["median_s"])
            result["commands"][command] = row
            print(command, json.dumps(row), flush=True)
    result["load_after"] = os.getloadavg()
    print("load average before", result["load_before"], "after", result["load_after"])
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
