"""Answer latency with SQLite state vs PostgreSQL state, in one process, question by question.

Two Cores over the same corpus differ only in their stores: one on a data
directory's SQLite files (LocalStores), one on a PostgreSQL database
(CODECITE_DATABASE_URL). No model keys: answers are extractive, so the time is
retrieval, the symbol table and the feedback record, the parts that touch
state. With the Pinecone index (each Core against its own fake Pinecone
server), each query also reads the corpus statistics and the repository states
from its store. Questions alternate which backend goes first (AB, BA, ...), so
noise of the machine falls on both alike; the answers must be the same.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import median, percentile
from bot.config import FileConfig, Settings
from bot.context import Context
from bot.core import Core

BACKENDS = ("sqlite", "postgres")
SYMBOL_TEMPLATES = ("where is {sym} defined?", "who calls {sym}?", "how does {sym} work?")
_DEF = re.compile(r"^\s*(?:def|class)\s+([A-Za-z_][A-Za-z0-9_]{3,})", re.MULTILINE)
ASKER = Context(platform="cli", user="bench", channel="bench", unlimited=True)


def build_questions(
    corpus: Path, cases: Path | None, repo: str, count: int, seed: int
) -> list[str]:
    """The evaluation set's questions about `repo` (free text), then symbol questions
    about names the corpus defines ("where is X defined", "who calls X"), `count` in all,
    shuffled."""
    free: list[str] = []
    if cases is not None and cases.exists():
        for line in cases.read_text(encoding="utf-8").splitlines():
            case = json.loads(line) if line.strip() else {}
            if case.get("repo") == repo:
                free.append(str(case["question"]))
    rng = random.Random(seed)
    free = free[: count // 2]
    symbols: set[str] = set()
    for path in sorted(corpus.rglob("*.py")):
        if "tests" not in path.parts:
            symbols.update(_DEF.findall(path.read_text(encoding="utf-8", errors="replace")))
    names = sorted(symbols)
    wanted = count - len(free)
    chosen = rng.sample(names, min(wanted, len(names)))
    chosen += [rng.choice(names) for _ in range(wanted - len(chosen))]
    questions = free + [rng.choice(SYMBOL_TEMPLATES).format(sym=s) for s in chosen]
    rng.shuffle(questions)
    return questions


@dataclass(frozen=True)
class Shape:
    """Where the search index lives: "local" (a SQLite file) or "pinecone" (the fake)."""

    index: str


@contextmanager
def core_for(shape: Shape, home: Path, database_url: str | None) -> Iterator[Core]:
    """A Core on `home` with SQLite stores, or PostgreSQL ones when `database_url`."""
    env: dict[str, Any] = {"CODECITE_HOME": str(home), "CODECITE_INDEX": shape.index}
    if database_url:
        env["CODECITE_DATABASE_URL"] = database_url
    with ExitStack() as stack:
        if shape.index == "pinecone":
            from tests.servers.pinecone_fake import FakePinecone

            fake = stack.enter_context(FakePinecone(dimension=8))
            env |= {"PINECONE_API_KEY": fake.api_key, "PINECONE_HOST": fake.url}
        core = Core.from_settings(Settings(**env), FileConfig())
        stack.callback(core.close)
        core.prepare_index()
        yield core


def compare(
    shape: Shape,
    corpus: Path,
    questions: Sequence[str],
    *,
    homes: Path,
    database_url: str,
    warmup: int,
) -> dict[str, Any]:
    """Index `corpus` into both, warm both up, then ask every question of both, ABAB."""
    latencies: dict[str, list[float]] = {b: [] for b in BACKENDS}
    same = 0
    with (
        core_for(shape, homes / f"{shape.index}-sqlite", None) as lite,
        core_for(shape, homes / f"{shape.index}-postgres", database_url) as pg,
    ):
        cores = {"sqlite": lite, "postgres": pg}
        for core in cores.values():
            core.index_repo(str(corpus), name=corpus.name)
        for text in questions[:warmup]:
            for core in cores.values():
                core.ask(text, ASKER)
        for i, text in enumerate(questions):
            order = BACKENDS if i % 2 == 0 else BACKENDS[::-1]
            answers = {}
            for backend in order:
                began = time.perf_counter()
                answers[backend] = cores[backend].ask(text, ASKER)
                latencies[backend].append(time.perf_counter() - began)
            a, b = answers["sqlite"], answers["postgres"]
            same += a.text == b.text and a.citations == b.citations
    return summarize(latencies, same)


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def summarize(latencies: dict[str, list[float]], same: int) -> dict[str, Any]:
    rows: dict[str, Any] = {
        b: {
            "p50_ms": _ms(median(v)),
            "p95_ms": _ms(percentile(v, 0.95)),
            "max_ms": _ms(max(v, default=0.0)),
        }
        for b, v in latencies.items()
    }
    lite, pg = rows["sqlite"], rows["postgres"]
    # Per question, what PostgreSQL added (the same question, asked moments apart).
    deltas = [p - s for s, p in zip(latencies["sqlite"], latencies["postgres"], strict=True)]
    return {
        "questions": len(deltas),
        "identical_answers": same,
        **rows,
        "added_p50_ms": round(pg["p50_ms"] - lite["p50_ms"], 2),
        "added_p95_ms": round(pg["p95_ms"] - lite["p95_ms"], 2),
        "paired_added_p50_ms": _ms(median(deltas)),
        "paired_added_p95_ms": _ms(percentile(deltas, 0.95)),
        "ratio_p50": round(pg["p50_ms"] / lite["p50_ms"], 3) if lite["p50_ms"] else None,
        "ratio_p95": round(pg["p95_ms"] / lite["p95_ms"], 3) if lite["p95_ms"] else None,
    }
