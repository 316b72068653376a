"""Load: bursts of concurrent questions through an AnswerQueue, idle and during a big first index.

    .venv/bin/python bench/load.py                       # corpus: this repo; ingest: the stdlib
    .venv/bin/python bench/load.py --rounds 2 --questions 50 --json
    .venv/bin/python bench/load.py --modes thread        # the old way alone

What it does, in one process, the way `codecite serve` runs the core:
  1. indexes the corpus (this repository) into a fresh data directory with the
     local defaults (LocalIndex, no model: OPENAI_* are ignored unless --keep-env);
  2. asks each question once to warm the caches (not measured);
  3. for each round and each ingest mode, alternating the order round by round
     (thread, child; child, thread; ...):
     - "idle": --bursts bursts of N questions from N threads at once (N users, N
       channels), each submitted to an AnswerQueue(workers=limits.workers) and awaited
       like an adapter;
     - starts a first index of a large tree (the stdlib) and, once it is under way,
       fires the same burst again and again while it runs (at most --bursts; a burst
       counts only if the ingest was still running when it ended);
       `thread`: the ingest runs in a thread of this process (the old default);
       `child`: in a child process at lower priority (`Core.ingest_in_children`, what
       `serve` does now);
     - forgets the ingested tree, so that the next ingest is a first index again;
  4. prints p50/p95 latency (submit to answer, which includes the wait in line) and
     service time per mode and phase, pooled over rounds, the ratio of the p95 during
     the ingest to the idle p95 of the same mode, the ingest times, and the load average.

Every question must be answered: any error or refusal makes the exit status 1.
The line is sized to hold the whole burst (--queue-size, default N): with the
default queue_size of 32, a burst of 50 would get 14 "busy" replies by design."""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import statistics
import sys
import sysconfig
import tempfile
import threading
import time
from dataclasses import dataclass, field
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
MODES = ("thread", "child")
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

    def __init__(self, core: Core, tree: Path, name: str) -> None:
        super().__init__(name="load-ingest", daemon=True)
        self.core = core
        self.tree = tree
        self.repo = name
        self.started = threading.Event()
        self.seconds = 0.0
        self.result: str = ""
        self.ok = False

    def run(self) -> None:
        began = time.perf_counter()
        try:
            report = self.core.index_repo(
                str(self.tree), name=self.repo, progress=lambda *_: self.started.set()
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
    print(f"{'':16}" + "".join(f"{phase:>16}" for phase in rows))
    for key in keys:
        print(f"{key:16}" + "".join(f"{rows[p][key]:>16}" for p in rows))


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--questions", type=int, default=50)
    p.add_argument("--corpus", type=Path, default=ROOT, help="tree the questions are about")
    p.add_argument("--ingest", type=Path, default=STDLIB, help="tree to ingest meanwhile")
    p.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    p.add_argument("--rounds", type=int, default=1, help="each mode once a round")
    p.add_argument("--bursts", type=int, default=3, help="bursts per phase, at most")
    p.add_argument("--config", type=Path, help="a codecite.toml whose [limits] to use")
    p.add_argument("--workers", type=int, help="default: limits.workers (4)")
    p.add_argument("--queue-size", type=int, help="default: the number of questions")
    p.add_argument("--seed", type=int, default=8)
    p.add_argument("--keep-env", action="store_true", help="use OPENAI_* from the environment")
    p.add_argument("--json", action="store_true", help="also print one JSON line")
    return p.parse_args()


@dataclass
class Phase:
    """The outcomes of one mode's bursts, idle or during its ingests, over every round."""

    outcomes: list[Outcome] = field(default_factory=list)
    bursts: int = 0
    ingest_seconds: list[float] = field(default_factory=list)
    results: list[str] = field(default_factory=list)
    ok: bool = True


class Bench:
    def __init__(self, args: argparse.Namespace, config: FileConfig) -> None:
        self.args = args
        self.core = Core.from_settings(Settings(), config)  # answers, and ingests in `thread`
        self.offloaded = Core.from_settings(Settings(), config)  # ingests in `child`
        self.offloaded.ingest_in_children()
        self.workers = args.workers or config.limits.workers
        self.size = args.queue_size if args.queue_size is not None else args.questions
        self.questions: list[str] = []
        self.round = 0

    def prepare(self) -> None:
        corpus = self.core.index_repo(str(self.args.corpus), name="corpus")
        print(f"corpus {self.args.corpus}: {corpus.files:,} files, {corpus.chunks:,} chunks")
        print(f"{self.args.questions} questions at once; workers={self.workers}, line={self.size}")
        self.questions = build_questions(self.args.corpus, self.args.questions, self.args.seed)
        self.warm()

    def warm(self) -> None:
        """Ask each question once, so every burst starts with warm caches."""
        for text in self.questions:
            self.core.ask(text, Context(platform="cli", user="warm-up", unlimited=True))

    def idle(self, phase: Phase) -> None:
        for _ in range(self.args.bursts):
            phase.outcomes += burst(self.core, self.questions, "idle", self.workers, self.size)
            phase.bursts += 1

    def during_ingest(self, mode: str, phase: Phase) -> None:
        ingester = self.core if mode == "thread" else self.offloaded
        ingest = Ingest(ingester, self.args.ingest, f"ingest-{mode}")
        ingest.start()
        ingest.started.wait()
        while ingest.is_alive() and phase.bursts < self.args.bursts * self.round:
            outcomes = burst(self.core, self.questions, "ingest", self.workers, self.size)
            if ingest.is_alive():  # a burst that saw the ingest end is not counted
                phase.outcomes += outcomes
                phase.bursts += 1
        ingest.join()
        phase.ingest_seconds.append(round(ingest.seconds, 1))
        phase.results.append(ingest.result)
        phase.ok = phase.ok and ingest.ok
        self.core.forget_repo(ingest.repo)  # the next ingest is a first index again
        self.warm()

    def run(self) -> dict[str, dict[str, Phase]]:
        phases = {m: {"idle": Phase(), "ingest": Phase()} for m in self.args.modes}
        for number in range(1, self.args.rounds + 1):
            self.round = number
            order = self.args.modes if self.round % 2 else list(reversed(self.args.modes))
            for mode in order:
                print(f"round {self.round}, {mode}: load {load_average()}", flush=True)
                self.idle(phases[mode]["idle"])
                self.during_ingest(mode, phases[mode]["ingest"])
        return phases

    def close(self) -> None:
        self.offloaded.close()
        self.core.close()


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def report(args: argparse.Namespace, phases: dict[str, dict[str, Phase]]) -> bool:
    rows: dict[str, dict[str, float]] = {}
    for mode, by_phase in phases.items():
        for name, phase in by_phase.items():
            rows[f"{mode} {name}"] = {**summarize(phase.outcomes), "bursts": phase.bursts}
        idle, busy = rows[f"{mode} idle"], rows[f"{mode} ingest"]
        busy["p50_ratio"] = round(busy["p50_ms"] / idle["p50_ms"], 2) if idle["p50_ms"] else 0.0
        busy["p95_ratio"] = round(busy["p95_ms"] / idle["p95_ms"], 2) if idle["p95_ms"] else 0.0
        idle["p50_ratio"] = idle["p95_ratio"] = 1.0
    print_table(rows)
    for mode, by_phase in phases.items():
        ingest = by_phase["ingest"]
        print(f"{mode}: ingest of {args.ingest}: {'; '.join(ingest.results)}")
        print(f"{mode}: ingest seconds per round: {ingest.ingest_seconds}")
    print(f"load average at the end: {load_average()}")
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak RSS MB: this process {own:.0f} (in-thread ingests included), child {child:.0f}")
    if args.json:
        print(json.dumps({"rounds": args.rounds, "questions": args.questions, **rows}))
    expected = args.questions
    answered = all(
        r["errors"] == 0 and r["answered"] == r["bursts"] * expected for r in rows.values()
    )
    measured = all(p["ingest"].bursts > 0 and p["ingest"].ok for p in phases.values())
    if not measured:
        print("an ingest failed, or ended before a whole burst ran beside it")
    return answered and measured


def run(args: argparse.Namespace) -> int:
    config = load_file_config(args.config) if args.config else FileConfig()
    bench = Bench(args, config)
    try:
        bench.prepare()
        phases = bench.run()
    finally:
        bench.close()
    return 0 if report(args, phases) else 1


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
