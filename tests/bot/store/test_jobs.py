"""The re-ingest job table (`stores.jobs`), on every storage implementation.

`stores` and `other` are two processes' views of one store (their own connections),
so a claim in one is seen, and refused, in the other.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from bot.store import StoreSet
from bot.store.jobs import DONE, FAILED, KEEP_SECONDS, MAX_ATTEMPTS, QUEUED, RUNNING, SqliteJobs
from tests.support.stores import open_kind


def test_a_job_goes_from_queued_to_done_and_its_text_reaches_every_process(
    stores: StoreSet, other: StoreSet
) -> None:
    job_id = stores.jobs.enqueue("shop", "webhook", "github")
    (queued,) = other.jobs.results([job_id]).values()
    assert (queued.repo, queued.trigger, queued.requested_by) == ("shop", "webhook", "github")
    assert queued.state == QUEUED and queued.attempts == 0 and not queued.finished

    claimed = other.jobs.claim("runner-b", lease=30)
    assert claimed is not None and claimed.id == job_id
    assert claimed.state == RUNNING and claimed.attempts == 1
    assert stores.jobs.claim("runner-a", lease=30) is None  # nothing else is runnable
    assert other.jobs.heartbeat(job_id, "runner-b")
    assert not stores.jobs.heartbeat(job_id, "runner-a")  # not its job
    assert not stores.jobs.finish(job_id, "runner-a", ok=True, text="stolen")
    assert other.jobs.finish(job_id, "runner-b", ok=True, text="• shop: +3/-1 chunks")

    done = stores.jobs.results([job_id, 999_999])
    assert list(done) == [job_id]  # an unknown id is simply absent
    assert done[job_id].state == DONE and done[job_id].finished
    assert done[job_id].text == "• shop: +3/-1 chunks"
    assert not other.jobs.finish(job_id, "runner-b", ok=False, text="again")  # finished once
    assert stores.jobs.results([job_id])[job_id].text == "• shop: +3/-1 chunks"
    assert stores.jobs.results([]) == {}


def test_a_second_request_joins_the_queued_job_of_its_repository(
    stores: StoreSet, other: StoreSet
) -> None:
    first = stores.jobs.enqueue("shop", "webhook", "github", quick=True)
    assert other.jobs.enqueue("shop", "slack command", "UADMIN") == first  # joined
    assert stores.jobs.enqueue("billing", "webhook", "github", quick=True) != first
    joined = stores.jobs.results([first])[first]
    assert joined.trigger == "webhook"  # the first request's
    assert joined.quick is False  # a full reindex joined a quick one: the job does it all

    claimed = stores.jobs.claim("runner", lease=30)
    assert claimed is not None and claimed.id == first
    # Once it runs, a new push may carry commits it has not seen: a new job.
    later = other.jobs.enqueue("shop", "webhook", "github", quick=True)
    assert later not in (first,)
    assert stores.jobs.results([later])[later].quick is True


def test_the_queue_depth_counts_the_jobs_no_runner_has_taken(
    stores: StoreSet, other: StoreSet
) -> None:
    assert other.jobs.queued() == 0
    first = stores.jobs.enqueue("shop", "webhook")
    stores.jobs.enqueue("shop", "webhook")  # joins: still one
    stores.jobs.enqueue("billing", "webhook")
    assert other.jobs.queued() == 2
    claimed = other.jobs.claim("runner", lease=30)
    assert claimed is not None and claimed.id == first
    assert stores.jobs.queued() == 1
    other.jobs.finish(first, "runner", ok=True, text="done")
    assert stores.jobs.queued() == 1


def test_concurrent_claimers_each_take_a_different_job(kind: str, home: Path) -> None:
    sets = [open_kind(kind, home) for _ in range(4)]
    try:
        ids = {sets[0].jobs.enqueue(f"repo{n:02d}", "webhook") for n in range(20)}
        assert len(ids) == 20
        start = threading.Barrier(len(sets))
        claimed: list[list[int]] = [[] for _ in sets]
        errors: list[BaseException] = []

        def claim_all(n: int) -> None:
            try:
                start.wait(timeout=30)
                while (job := sets[n].jobs.claim(f"runner-{n}", lease=60)) is not None:
                    claimed[n].append(job.id)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=claim_all, args=(n,)) for n in range(len(sets))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert errors == []
        every = [job_id for mine in claimed for job_id in mine]
        assert sorted(every) == sorted(ids)  # each job claimed exactly once
        assert len(set(every)) == len(every)
    finally:
        for opened in sets:
            opened.close()


def test_a_job_whose_runner_stopped_heartbeating_is_claimed_again(
    stores: StoreSet, other: StoreSet
) -> None:
    job_id = stores.jobs.enqueue("shop", "webhook")
    assert stores.jobs.claim("dead-runner", lease=0.5) is not None
    assert other.jobs.claim("live-runner", lease=30) is None  # the lease still holds
    time.sleep(0.8)
    again = other.jobs.claim("live-runner", lease=30)
    assert again is not None and again.id == job_id and again.attempts == 2
    # The dead runner, should it wake up, can no longer touch the job.
    assert not stores.jobs.heartbeat(job_id, "dead-runner")
    assert not stores.jobs.finish(job_id, "dead-runner", ok=True, text="late")
    assert other.jobs.finish(job_id, "live-runner", ok=True, text="• shop: up to date")
    assert stores.jobs.results([job_id])[job_id].text == "• shop: up to date"


def test_a_heartbeat_keeps_the_lease(stores: StoreSet, other: StoreSet) -> None:
    stores.jobs.enqueue("shop", "webhook")
    job = stores.jobs.claim("runner-a", lease=0.6)
    assert job is not None
    for _ in range(4):
        time.sleep(0.25)
        assert stores.jobs.heartbeat(job.id, "runner-a")
        assert other.jobs.claim("runner-b", lease=30) is None


def test_a_job_that_killed_its_runner_every_time_fails_with_a_clear_text(
    stores: StoreSet, other: StoreSet
) -> None:
    job_id = stores.jobs.enqueue("poison", "webhook")
    healthy = stores.jobs.enqueue("shop", "webhook")
    for attempt in range(1, MAX_ATTEMPTS + 1):
        job = other.jobs.claim(f"runner-{attempt}", lease=0.3)
        assert job is not None and job.id == job_id and job.attempts == attempt
        time.sleep(0.5)  # ... and the runner dies
    nxt = stores.jobs.claim("runner-next", lease=30)
    assert nxt is not None and nxt.id == healthy  # the poison job is not run again
    failed = other.jobs.results([job_id])[job_id]
    assert failed.state == FAILED and failed.finished
    assert failed.text.startswith("• poison: failed:")
    assert f"{MAX_ATTEMPTS} times" in failed.text


def test_a_repository_being_ingested_is_not_claimed_twice(
    stores: StoreSet, other: StoreSet
) -> None:
    first = stores.jobs.enqueue("shop", "schedule")
    assert stores.jobs.claim("runner-a", lease=30) is not None
    second = stores.jobs.enqueue("shop", "webhook")
    billing = stores.jobs.enqueue("billing", "webhook")
    took = other.jobs.claim("runner-b", lease=30)
    assert took is not None and took.id == billing  # shop's next job waits for the first
    assert other.jobs.claim("runner-b", lease=30) is None
    assert stores.jobs.finish(first, "runner-a", ok=True, text="done")
    after = other.jobs.claim("runner-b", lease=30)
    assert after is not None and after.id == second


def test_a_lease_must_be_positive(stores: StoreSet) -> None:
    with pytest.raises(ValueError, match="lease"):
        stores.jobs.claim("runner", lease=0)


def test_finished_jobs_are_pruned_after_a_week(tmp_path: Path) -> None:
    now = [1_000_000.0]
    jobs = SqliteJobs(tmp_path / "jobs.sqlite", clock=lambda: now[0])
    try:
        old = jobs.enqueue("shop", "webhook")
        claimed = jobs.claim("runner", lease=30)
        assert claimed is not None
        assert jobs.finish(old, "runner", ok=True, text="done")
        waiting = jobs.enqueue("billing", "webhook")
        now[0] += KEEP_SECONDS + 1
        jobs.enqueue("api", "webhook")  # enqueueing sweeps
        assert set(jobs.results([old, waiting])) == {waiting}  # a queued job is never pruned
    finally:
        jobs.close()


def test_cancel_fails_the_queued_jobs_of_one_repository_only(
    stores: StoreSet, other: StoreSet
) -> None:
    """`forget`: whoever waits on a queued job hears why it never ran; a running job is
    left to its runner (the forget waits for its lock)."""
    running = stores.jobs.enqueue("billing", "webhook")
    claimed = other.jobs.claim("runner", lease=30)
    assert claimed is not None and claimed.id == running
    shop = stores.jobs.enqueue("shop", "webhook")
    again = stores.jobs.enqueue("billing", "slack command")
    assert other.jobs.cancel("shop", "• shop: forgotten") == 1
    assert other.jobs.cancel("shop", "• shop: forgotten") == 0
    jobs = stores.jobs.results([shop, running, again])
    assert (jobs[shop].state, jobs[shop].text) == (FAILED, "• shop: forgotten")
    assert jobs[running].state == RUNNING and jobs[again].state == QUEUED
    assert other.jobs.cancel("billing", "• billing: forgotten") == 1
    assert stores.jobs.results([running])[running].state == RUNNING
    assert stores.jobs.claim("runner", lease=30) is None  # the cancelled jobs never run
