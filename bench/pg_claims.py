"""Event claims under concurrent replicas: N processes claim the same stream of events.

Each replica is its own process with its own StoreSet (a connection pool of its
own on one PostgreSQL database, or the one data directory's events.sqlite), as
bot processes behind one Slack app are. For every event all replicas meet at a
barrier, then claim the event's keys at once, the way replicas that all got the
same Slack retry would: the Slack adapter's two keys (the message, and the event
id). Each claim is timed; exactly one replica must win each event.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.common import median, percentile
from bot.store import open_store

TTL = 24 * 3600.0  # adapters.common.dedupe's: nothing expires during a run
WARMUP = 5  # claims of a replica's own keys before the contended stream (connect, prepare)


def event_keys(i: int, run: str) -> tuple[str, ...]:
    ts = f"1767225600.{i:06d}"
    return (f"slack:T0BENCH:C0BENCH:{ts}", f"slack:event:Ev{run}{i:08d}")


def _replica(
    replica: int, home: str, url: str | None, events: int, run: str, barrier: Any, out: Any
) -> None:
    stores = open_store(Path(home), database_url=url)
    try:
        claims = stores.claims
        owner = f"replica-{replica}"
        for w in range(WARMUP):
            claims.claim(f"warmup:{run}:{replica}:{w}", ttl=TTL, owner=owner)
        won: list[int] = []
        seconds: list[float] = []
        for i in range(events):
            keys = event_keys(i, run)
            barrier.wait()
            began = time.perf_counter()
            if claims.claim(*keys, ttl=TTL, owner=owner):
                won.append(i)
            seconds.append(time.perf_counter() - began)
        out.put((replica, won, seconds, ""))
    except Exception as exc:  # the parent reports it; a benchmark counts every failure
        out.put((replica, [], [], f"{type(exc).__name__}: {exc}"))
        barrier.abort()
    finally:
        stores.close()


def _collect(out: Any, procs: list[Any], limit: float = 600) -> list[tuple[Any, ...]]:
    """Every replica's report; a replica that died without one is reported as failed."""
    results: list[tuple[Any, ...]] = []
    deadline = time.monotonic() + limit
    while len(results) < len(procs) and time.monotonic() < deadline:
        try:
            results.append(out.get(timeout=1))
        except queue.Empty:
            if all(p.exitcode is not None for p in procs) and out.empty():
                break
    for p in procs:
        p.join(timeout=10)
        if p.is_alive():
            p.kill()
    missing = len(procs) - len(results)
    return results + [(-1, [], [], "a replica died without a report")] * missing


def run(
    *, replicas: int, events: int, home: Path, database_url: str | None, run: str
) -> dict[str, Any]:
    """`replicas` processes, every one claiming each of `events` events."""
    ctx = mp.get_context("spawn")  # no pool or file handle of this process is inherited
    barrier = ctx.Barrier(replicas, timeout=120)
    out = ctx.Queue()
    home.mkdir(parents=True, exist_ok=True)
    procs = [
        ctx.Process(target=_replica, args=(r, str(home), database_url, events, run, barrier, out))
        for r in range(replicas)
    ]
    for p in procs:
        p.start()
    results = _collect(out, procs)
    errors = [e for *_, e in results if e]
    winners: Counter[int] = Counter()
    latencies: list[float] = []
    for _replica_id, won, seconds, _ in results:
        winners.update(won)
        latencies.extend(seconds)
    wrong = sum(1 for i in range(events) if winners[i] != 1)
    return {
        "replicas": replicas,
        "events": events,
        "claims": len(latencies),
        "errors": errors,
        "keys_without_exactly_one_winner": wrong,
        "p50_ms": round(median(latencies) * 1000, 2),
        "p95_ms": round(percentile(latencies, 0.95) * 1000, 2),
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 2),
        "max_ms": round(max(latencies, default=0.0) * 1000, 2),
    }
