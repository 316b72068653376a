"""The job runner: claims recorded jobs, runs them on the ingest line, records the result."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from bot.core import Core
from bot.jobs import JobRunner
from bot.store import open_store
from bot.store.jobs import DONE, FAILED, Job


def runner_of(core: Core, lease: float = 30.0) -> JobRunner:
    return JobRunner(core.stores.jobs, core._ingest, lease=lease, poll=0.05)


def finished(core: Core, job_id: int, timeout: float = 60.0) -> Job:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = core.stores.jobs.results([job_id]).get(job_id)
        if job is not None and job.finished:
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish")


def test_a_job_is_ingested_under_the_lock_and_logged_with_its_trigger(core: Core) -> None:
    job_id = core.stores.jobs.enqueue("shop", "webhook", "github", quick=True)
    runner = runner_of(core)
    runner.start()
    try:
        job = finished(core, job_id)
    finally:
        runner.stop(timeout=60)
    assert job.state == DONE and job.attempts == 1
    assert job.text.startswith("• shop: ") and "chunks" in job.text
    last = core.runs.last("shop")
    assert last is not None and last.ok and last.trigger == "webhook"
    assert [s.name for s in core.index.repo_states()] == ["shop"]


def test_an_unknown_repository_and_an_ingest_bug_fail_their_job_not_the_runner(
    core: Core, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = core._ingest.index_repo
    calls: list[str] = []

    def buggy_once(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs["name"])
        if len(calls) == 1:
            raise RuntimeError("a bug")
        return real(*args, **kwargs)

    monkeypatch.setattr(core._ingest, "index_repo", buggy_once)
    unknown = core.stores.jobs.enqueue("nowhere", "slack command", "U1")
    bug = core.stores.jobs.enqueue("shop", "slack command", "U1")
    runner = runner_of(core)
    runner.start()
    try:
        lost, broken = finished(core, unknown), finished(core, bug)
        again = core.stores.jobs.enqueue("shop", "slack command", "U1")
        fine = finished(core, again)
    finally:
        runner.stop(timeout=60)
    assert lost.state == FAILED and lost.text == "• nowhere: failed: codecite does not know it."
    assert broken.state == FAILED
    assert broken.text == "• shop: failed: The ingest failed unexpectedly; see the log."
    assert "a bug" not in broken.text  # no raw exception text for users
    assert fine.state == DONE and calls == ["shop", "shop"]


def slowed(core: Core, monkeypatch: pytest.MonkeyPatch, seconds: float) -> threading.Event:
    """Every ingest of `core` takes `seconds` longer; the event is set when one starts."""
    started = threading.Event()
    real: Callable[..., Any] = core._ingest.index_repo

    def slow(*args: Any, **kwargs: Any) -> Any:
        started.set()
        time.sleep(seconds)
        return real(*args, **kwargs)

    monkeypatch.setattr(core._ingest, "index_repo", slow)
    return started


def test_heartbeats_keep_a_long_job_from_being_taken_over(
    core: Core, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = slowed(core, monkeypatch, 2.0)
    job_id = core.stores.jobs.enqueue("shop", "webhook")
    runner = runner_of(core, lease=0.6)  # heartbeats every 0.2 s
    other = open_store(core.settings.home)  # another scheduler's view
    runner.start()
    try:
        assert started.wait(timeout=30)
        for _ in range(6):
            assert other.jobs.claim("other-runner", lease=30) is None
            time.sleep(0.25)
        job = finished(core, job_id)
    finally:
        runner.stop(timeout=60)
        other.close()
    assert job.state == DONE and job.attempts == 1


def test_stop_lets_the_job_under_way_finish(core: Core, monkeypatch: pytest.MonkeyPatch) -> None:
    started = slowed(core, monkeypatch, 1.0)
    job_id = core.stores.jobs.enqueue("shop", "webhook")
    runner = runner_of(core)
    runner.start()
    assert started.wait(timeout=30)
    runner.stop(timeout=60)
    (job,) = core.stores.jobs.results([job_id]).values()
    assert job.state == DONE  # recorded before stop returned
    later = core.stores.jobs.enqueue("shop", "webhook")
    time.sleep(0.3)
    assert (
        core.stores.jobs.results([later])[later].state == "queued"
    )  # a stopped runner claims nothing
