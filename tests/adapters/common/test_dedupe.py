"""adapters/common/dedupe.py: one claim per key, across threads and processes.

Kept free of heavy imports: the race test spawns processes that import this module.
"""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

import pytest

from adapters.common.dedupe import EventDedupe


def test_claim_is_all_or_nothing(tmp_path: Path) -> None:
    store = EventDedupe(tmp_path / "events.sqlite")
    assert store.claim("slack:T:C:1", "slack:event:E1")
    assert not store.claim("slack:T:C:1", "slack:event:E2")  # same message, other event
    assert not store.claim("slack:event:E1")  # a retry of the first event
    assert store.claim("slack:event:E2")  # E2 was not kept by the refused claim
    with pytest.raises(ValueError, match="key"):
        store.claim("")
    store.close()


def test_claims_expire(tmp_path: Path) -> None:
    now = [1000.0]
    store = EventDedupe(tmp_path / "events.sqlite", ttl_seconds=60, clock=lambda: now[0])
    assert store.claim("k")
    now[0] += 59
    assert not store.claim("k")
    now[0] += 2
    assert store.claim("k")
    store.close()


def _claim_many(path: str, keys: list[str], start: Any, out: Any) -> None:
    store = EventDedupe(Path(path))
    start.wait(timeout=60)  # every process is ready: now they race
    out.put([k for k in keys if store.claim(k, owner=str(multiprocessing.current_process().pid))])
    store.close()


def test_processes_racing_for_the_same_events_claim_each_once(tmp_path: Path) -> None:
    path = str(tmp_path / "events.sqlite")
    EventDedupe(Path(path)).close()  # create the schema before the race
    keys = [f"slack:T:C:{i}" for i in range(60)]
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    start = ctx.Barrier(4)
    procs = [ctx.Process(target=_claim_many, args=(path, keys, start, out)) for _ in range(4)]
    for p in procs:
        p.start()
    won = [out.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    claimed = [k for batch in won for k in batch]
    assert sorted(claimed) == sorted(keys)  # every key exactly once across processes


def test_with_the_shared_store_away_each_event_is_still_claimed_once_in_the_process(
    tmp_path: Path,
) -> None:
    """Issue 27: one mention got the database's sentence four times (its retries)."""
    from bot.store.claims import SqliteClaims

    shared = SqliteClaims(tmp_path / "events.sqlite")
    store = EventDedupe(shared)
    assert store.claim("slack:T1:C1:1.0", "slack:event:Ev1")
    shared.close()  # every claim now fails with StoreError
    assert store.claim("slack:T1:C1:2.0", "slack:event:Ev2")  # a new event: answered
    assert not store.claim("slack:T1:C1:2.0", "slack:event:Ev2")  # its retries: not again
    assert not store.claim("slack:event:Ev2")
    assert not store.claim("slack:T1:C1:1.0")  # claimed before the outage, by this process
