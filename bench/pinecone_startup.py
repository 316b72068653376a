"""What a configured Pinecone adds to a `codecite` command's wall time (issue 27 item 10).

    .venv/bin/python bench/pinecone_startup.py --tree /tmp/somerepo --runs 10 \
        --out bench/results/pinecone_startup.json

One checkout, two configurations side by side: the local index, and Pinecone (the
strict fake of tests/servers, addressed by PINECONE_HOST as a deployment does), both
with the same model and embeddings (the fake OpenAI server), both holding `--tree`.
For each command (`status`, `search`, `ask`) the two run alternately, `--runs` times
each, in bench/startup.py's way (its `run`: a fresh interpreter, the console script of
`--script`'s venv, outside the checkout). Reported: the median wall seconds of each
and what Pinecone adds (the difference of the medians; the target is <= 0.3 s), and,
from `--import-runs` runs under `-X importtime`, the seconds spent importing. The load
average is read before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, median
from bench.startup import import_profile, run
from tests.servers.openai_fake import FakeOpenAI
from tests.servers.pinecone_fake import FakePinecone

DIM = 64
QUESTION = "how are redirects followed"
COMMANDS = {"status": ["status"], "search": ["search", QUESTION], "ask": ["ask", QUESTION]}


def environments(openai: FakeOpenAI, pinecone: FakePinecone) -> dict[str, dict[str, str]]:
    model = {
        "OPENAI_API_KEY": "sk-bench-startup",
        "OPENAI_BASE_URL": openai.base_url,
        "CODECITE_EMBED_DIMENSIONS": str(DIM),
    }
    return {
        "local": {**model, "CODECITE_INDEX": "local"},
        "pinecone": {
            **model,
            "CODECITE_INDEX": "pinecone",
            "PINECONE_API_KEY": pinecone.api_key,
            "PINECONE_HOST": pinecone.url,
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", type=Path, default=ROOT / ".venv" / "bin" / "codecite")
    parser.add_argument("--tree", type=Path, required=True, help="a directory to index")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--import-runs", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    result: dict[str, Any] = {"load_before": os.getloadavg(), "runs": args.runs, "commands": {}}
    with (
        FakeOpenAI(dimensions=DIM) as openai,
        FakePinecone(dimension=DIM) as pinecone,
        tempfile.TemporaryDirectory(prefix="codecite-pcstart-") as scratch,
    ):
        setups = environments(openai, pinecone)
        homes = {name: Path(scratch) / name for name in setups}
        for name, env in setups.items():
            run(args.script, homes[name], ["index", str(args.tree), "--name", "tree"], env)
        for command, line in COMMANDS.items():
            walls: dict[str, list[float]] = {name: [] for name in setups}
            for _ in range(args.runs):  # alternate, so both see the same load
                for name, env in setups.items():
                    walls[name].append(run(args.script, homes[name], line, env)[0])
            row: dict[str, Any] = {}
            for name, env in setups.items():
                profiles = [
                    import_profile(args.script, homes[name], line, env)
                    for _ in range(args.import_runs)
                ]
                row[name] = {
                    "median_s": round(median(walls[name]), 3),
                    "import_s": round(median([p["import_s"] for p in profiles]), 3),
                    "heavy": profiles[0]["heavy"],
                }
            added = row["pinecone"]["median_s"] - row["local"]["median_s"]
            row["pinecone_adds_s"] = round(added, 3)
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
