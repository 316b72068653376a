"""bench/postgres_state.py end to end on a tiny corpus with tiny counts, so it cannot rot:
its own PostgreSQL server, both backends in every part, one winner per event."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.gitrepo import GitRepo
from tests.support.postgres import find_binary, unavailable
from tests.support.shop import build_shop

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = {
    "pkg/alpha.py": "def alpha():\n    return beta()\n\n\ndef beta():\n    return 1\n",
    "pkg/gamma.py": "class Gamma:\n    def run(self):\n        return alpha()\n",
    "README.md": "# not code: a file row without definitions\n",
}


def test_both_backends_side_by_side_and_one_winner_per_event(tmp_path: Path) -> None:
    if find_binary("initdb") is None or find_binary("pg_ctl") is None:
        unavailable("initdb/pg_ctl not found")
    repo = GitRepo(tmp_path / "shop")
    build_shop(repo)
    library = tmp_path / "library"
    for rel, text in LIBRARY.items():
        (library / rel).parent.mkdir(parents=True, exist_ok=True)
        (library / rel).write_text(text)
    out = tmp_path / "result.json"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "postgres_state.py"),
            "--corpus", str(repo.path), "--cases", str(tmp_path / "none.jsonl"),
            "--questions", "6", "--warmup", "2", "--stdlib", str(library),
            "--repetitions", "2", "--replicas", "3", "--events", "12", "--out", str(out),
        ],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())

    for shape in ("local", "pinecone"):
        answers = result["answers"][shape]
        assert answers["questions"] == 6
        assert answers["identical_answers"] == 6  # PostgreSQL state answers what SQLite does
        for backend in ("sqlite", "postgres"):
            assert 0 < answers[backend]["p50_ms"] <= answers[backend]["p95_ms"]

    symbols = result["symbols"]
    assert (symbols["files"], symbols["definitions"]) == (3, 4)  # alpha, beta, Gamma, run
    for backend in ("sqlite", "postgres"):
        assert len(symbols[backend]["runs_s"]) == 2 and symbols[backend]["median_s"] > 0

    for backend in ("sqlite", "postgres"):
        claims = result["claims"][backend]
        assert claims["errors"] == []
        assert claims["claims"] == 3 * 12  # every replica claimed every event
        assert claims["keys_without_exactly_one_winner"] == 0
    assert "sqlite p50/p95 ms" in done.stdout and "not 1 winner" in done.stdout
