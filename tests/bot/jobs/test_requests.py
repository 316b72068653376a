"""Reindex requests: the asker's Future resolves from the job rows, wherever the job ran."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.jobs import ReindexRequests, Target
from bot.jobs.requests import NOT_STARTED, STOPPED
from bot.store import StoreSet, open_store
from bot.store.jobs import QUEUED


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[StoreSet]:
    opened = open_store(tmp_path / "home")
    yield opened
    opened.close()


def requests_over(stores: StoreSet, **kwargs: float) -> ReindexRequests:
    return ReindexRequests(lambda: stores.jobs, poll=0.05, **kwargs)


SHOP, BILLING = Target("shop", "/src/shop"), Target("billing", "/src/billing")


def test_the_future_carries_each_jobs_result_once_all_have_finished(stores: StoreSet) -> None:
    requests = requests_over(stores)
    try:
        later = requests.request([SHOP, BILLING], trigger="slack command", requested_by="U1")
        first = stores.jobs.claim("elsewhere", lease=30)
        second = stores.jobs.claim("elsewhere", lease=30)
        assert first is not None and second is not None
        assert {first.repo, second.repo} == {"shop", "billing"}
        assert first.requested_by == "U1" and first.trigger == "slack command"
        by_repo = {first.repo: first, second.repo: second}
        stores.jobs.finish(by_repo["billing"].id, "elsewhere", ok=True, text="• billing: ok")
        with pytest.raises(TimeoutError):
            later.result(timeout=0.3)  # shop is still running
        stores.jobs.finish(by_repo["shop"].id, "elsewhere", ok=False, text="• shop: failed: x")
        assert later.result(timeout=10) == "• shop: failed: x\n• billing: ok"  # asked order
    finally:
        requests.close()


def test_a_job_no_runner_takes_is_reported_and_stays_queued(stores: StoreSet) -> None:
    requests = requests_over(stores, unclaimed_after=0.3)
    try:
        later = requests.request([SHOP], trigger="discord command", requested_by="U1")
        assert later.result(timeout=10) == NOT_STARTED.format("shop")
        assert "queued" in later.result() and "scheduler" in later.result()
        job = stores.jobs.claim("late-runner", lease=30)  # still there for a scheduler
        assert job is not None and job.repo == "shop" and job.attempts == 1
    finally:
        requests.close()


def test_a_running_job_is_waited_for_past_the_unclaimed_mark(stores: StoreSet) -> None:
    requests = requests_over(stores, unclaimed_after=0.1)
    try:
        later = requests.request([SHOP], trigger="slack command", requested_by="U1")
        job = stores.jobs.claim("runner", lease=30)
        assert job is not None
        with pytest.raises(TimeoutError):
            later.result(timeout=0.5)
        stores.jobs.finish(job.id, "runner", ok=True, text="• shop: up to date at abc1234")
        assert later.result(timeout=10) == "• shop: up to date at abc1234"
    finally:
        requests.close()


def test_requests_for_one_repository_share_its_queued_job(stores: StoreSet) -> None:
    requests = requests_over(stores)
    try:
        a = requests.request([SHOP], trigger="slack command", requested_by="U1")
        b = requests.request([SHOP], trigger="discord command", requested_by="U2")
        job = stores.jobs.claim("runner", lease=30)
        assert job is not None and stores.jobs.claim("runner", lease=30) is None
        stores.jobs.finish(job.id, "runner", ok=True, text="• shop: done")
        assert a.result(timeout=10) == b.result(timeout=10) == "• shop: done"
    finally:
        requests.close()


def test_nothing_to_reindex_and_closing_with_waiters(stores: StoreSet) -> None:
    requests = requests_over(stores)
    assert requests.request([], trigger="x", requested_by="U1").result(timeout=1) == (
        "There is nothing to reindex."
    )
    pending = requests.request([SHOP], trigger="x", requested_by="U1")
    requests.close()
    assert pending.result(timeout=10) == STOPPED.format("shop")
    (job,) = stores.jobs.results([1]).values()
    assert job.state == QUEUED  # the job itself goes on without this process
