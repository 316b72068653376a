"""Load: a burst of concurrent questions through an AnswerQueue, idle and during a big ingest.

    .venv/bin/python bench/load.py                       # corpus: this repo; ingest: the stdlib
    .venv/bin/python bench/load.py --questions 50 --ingest /path/to/big/tree --json

What it does, in one process, the way a chat adapter runs the core:
  1. indexes the corpus (this repository) into a fresh data directory with the
     local defaults (LocalIndex, no model: OPENAI_* are ignored unless --keep-env);
  2. asks each question once to warm the caches (not measured), then
     burst "idle": N questions from N threads at once (N users, N channels), each
     submitted to an AnswerQueue(workers=limits.workers) and awaited like an adapter;
  3. starts ingesting a large tree (the stdlib) in another thread and, once it is
     under way, fires the same burst again ("ingest");
  4. waits for the ingest and prints p50/p95 latency (submit to answer, which
     includes the wait in line) and service time for both bursts, side by side.

Every question must be answered: any error or refusal makes the exit status 1.
The line is sized to hold the whole burst (--queue-size, default N): with the
default queue_size of 32, a burst of 50 would get 14 "busy" replies by design.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import sys
import sysconfig
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.config import FileConfig, Settings, load_file_config
from bot.core import Context, Core
from bot.errors import BotError
from bot.runtime.queue import AnswerQueue

ROOT = Path(__file__).resolve().parents[1]
STDLIB = Path(sysconfig.get_paths()["stdlib"])
TEMPLATES = (
    "how does {sym} work?",
    "where is {sym} defined?",
    "what calls {sym}?",
    "why does {sym} exist and what does it return?",
)
_DEF = re.compile(r"^\s*(?:def|class)\s+([A-Za-z_][A-Za-z0-9_]{3,})", re.MULTILINE)


@dataclass(frozen=True)
class Outcome:
    latency: float  # submit -> answer, as the asker waits
    service: float  # time inside the worker
    position: int  # place in line when submitted
    cited: bool
    error: str = ""


def build_questions(corpus: Path, count: int, seed: int) -> list[str]:
    """Questions about symbols the corpus defines, so each has a real answer."""
    symbols: set[str] = set()
    for path in sorted(corpus.rglob("*.py")):
        if ".venv" in path.parts or "tests" in path.parts:
            continue
        symbols.update(_DEF.findall(path.read_text(encoding="utf-8", errors="replace")))
    rng = random.Random(seed)
    chosen = rng.sample(sorted(symbols), min(count, len(symbols)))
    while len(chosen) < count:
        chosen.append(rng.choice(sorted(symbols)))
    return [rng.choice(TEMPLATES).format(sym=s) for s in chosen]


def burst(core: Core, questions: list[str], phase: str, workers: int, size: int) -> list[Outcome]:
    """All questions at once, one thread per asker, through one AnswerQueue."""
    queue = AnswerQueue(workers, size, name=f"load-{phase}")
    start = threading.Barrier(len(questions))
    outcomes: list[Outcome | None] = [None] * len(questions)

    def ask(i: int, text: str) -> None:
        ctx = Context(platform="slack", user=f"U-{phase}-{i}", channel=f"C-{phase}-{i}")
        start.wait()
        began = time.perf_counter()
        served: list[float] = []

        def job() -> bool:
            t0 = time.perf_counter()
            answer = core.ask(text, ctx)
            served.append(time.perf_counter() - t0)
            return bool(answer.citations)

        position, error, cited = -1, "", False
        try:
            ticket = queue.submit(job)
            position = ticket.position
            cited = ticket.future.result(timeout=600)
        except BotError as exc:
            error = exc.user_message
        except Exception as exc:  # a benchmark counts every failure
            error = f"{type(exc).__name__}: {exc}"
        latency = time.perf_counter() - began
        outcomes[i] = Outcome(latency, served[0] if served else 0.0, position, cited, error)

    threads = [threading.Thread(target=ask, args=(i, q)) for i, q in enumerate(questions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    queue.shutdown()
    return [o for o in outcomes if o is not None]


class Ingest(threading.Thread):
    """Ingest a tree in the background; `started` is set at its first progress report."""

    def __init__(self, core: Core, tree: Path) -> None:
        super().__init__(name="load-ingest", daemon=True)
        self.core = core
        self.tree = tree
        self.started = threading.Event()
        self.seconds = 0.0
        self.result: str = ""
        self.ok = False

    def run(self) -> None:
        began = time.perf_counter()
        try:
            report = self.core.index_repo(
                str(self.tree), name="ingest", progress=lambda *_: self.started.set()
            )
            self.result = f"{report.files:,} files, {report.chunks:,} chunks"
            self.ok = True
        except BotError as exc:
            self.result = f"failed: {exc.user_message}"
        finally:
            self.seconds = time.perf_counter() - began
            self.started.set()


def percentile(values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def summarize(outcomes: list[Outcome]) -> dict[str, float]:
    latencies = [o.latency for o in outcomes]
    service = [o.service for o in outcomes if not o.error]
    return {
        "questions": len(outcomes),
        "answered": sum(1 for o in outcomes if not o.error),
        "errors": sum(1 for o in outcomes if o.error),
        "cited": sum(1 for o in outcomes if o.cited),
        "max_position": max((o.position for o in outcomes), default=0),
        "p50_ms": round(percentile(latencies, 0.50) * 1000, 1),
        "p95_ms": round(percentile(latencies, 0.95) * 1000, 1),
        "max_ms": round(max(latencies, default=0.0) * 1000, 1),
        "service_p50_ms": round(statistics.median(service) * 1000 if service else 0.0, 1),
        "service_p95_ms": round(percentile(service, 0.95) * 1000, 1),
    }


def print_table(rows: dict[str, dict[str, float]]) -> None:
    keys = list(next(iter(rows.values())))
    print(f"{'':16}" + "".join(f"{phase:>14}" for phase in rows))
    for key in keys:
        print(f"{key:16}" + "".join(f"{rows[p][key]:>14}" for p in rows))


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--questions", type=int, default=50)
    p.add_argument("--corpus", type=Path, default=ROOT, help="tree the questions are about")
    p.add_argument("--ingest", type=Path, default=STDLIB, help="tree to ingest meanwhile")
    p.add_argument("--config", type=Path, help="a codecite.toml whose [limits] to use")
    p.add_argument("--workers", type=int, help="default: limits.workers (4)")
    p.add_argument("--queue-size", type=int, help="default: the number of questions")
    p.add_argument("--seed", type=int, default=8)
    p.add_argument("--keep-env", action="store_true", help="use OPENAI_* from the environment")
    p.add_argument("--json", action="store_true", help="also print one JSON line")
    return p.parse_args()


def run(args: argparse.Namespace) -> int:
    config = load_file_config(args.config) if args.config else FileConfig()
    core = Core.from_settings(Settings(), config)
    workers = args.workers or config.limits.workers
    size = args.queue_size if args.queue_size is not None else args.questions
    corpus = core.index_repo(str(args.corpus), name="corpus")
    print(f"corpus {args.corpus}: {corpus.files:,} files, {corpus.chunks:,} chunks")
    print(f"{args.questions} questions at once; workers={workers}, line={size}")
    questions = build_questions(args.corpus, args.questions, args.seed)
    for text in questions:  # warm the caches once, so both bursts start alike
        core.ask(text, Context(platform="cli", user="warm-up", unlimited=True))

    rows = {"idle": summarize(burst(core, questions, "idle", workers, size))}
    ingest = Ingest(core, args.ingest)
    ingest.start()
    ingest.started.wait()
    rows["during ingest"] = summarize(burst(core, questions, "ingest", workers, size))
    overlapped = ingest.is_alive()
    ingest.join()
    core.close()

    print_table(rows)
    print(f"ingest of {args.ingest}: {ingest.result} in {ingest.seconds:.1f}s")
    print(f"the second burst ran while the ingest was in progress: {overlapped}")
    if args.json:
        print(json.dumps({"workers": workers, "line": size, "overlapped": overlapped, **rows}))
    failed = any(r["errors"] or r["answered"] != args.questions for r in rows.values())
    return 1 if failed or not overlapped or not ingest.ok else 0


def main() -> int:
    args = parse_args()
    if not args.keep_env:  # the local default: no model, no embeddings, LocalIndex
        for name in [n for n in os.environ if n.startswith(("OPENAI_", "CODECITE_", "PINECONE_"))]:
            del os.environ[name]
    home = tempfile.mkdtemp(prefix="codecite-load-")
    os.environ["CODECITE_HOME"] = home
    try:
        return run(args)
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
