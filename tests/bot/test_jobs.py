"""Re-ingest jobs: the chat `reindex`, the scheduler and push webhooks share one entry.

Every run goes through `Core.reindex_repo` / the ingest line (`bot.jobs`), on the
line's own threads: a reindex never holds an answer worker, and a busy answer
queue never holds a reindex.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from apscheduler.events import EVENT_JOB_EXECUTED
from apscheduler.schedulers.background import BackgroundScheduler

from adapters.schedule import JOB_PREFIX, IngestScheduler
from bot.config import FileConfig, RepoConfig, ScheduleConfig, Settings
from bot.core import Context, Core
from bot.errors import PermissionDenied, ScopeError
from bot.runtime.queue import AnswerQueue
from tests.support.jobs import running_jobs
from tests.support.shop import build_shop

ADMIN = Context("slack", "UADMIN", "C1", is_admin=True)


@pytest.fixture
def core(make_repo: Any) -> Iterator[Core]:
    repo = make_repo("shop")
    build_shop(repo)
    config = FileConfig(
        repos=(RepoConfig(name="shop", path=str(repo.path), schedule="1d"),),
        schedule=ScheduleConfig(jitter_seconds=0),
    )
    core = Core.from_settings(Settings(), config)
    core.index_repo(str(repo.path), name="shop")
    with running_jobs(core):  # the scheduler's runner: it runs the jobs chat reindexes record
        yield core
    core.close()


def spy_on_runs(core: Core, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """(trigger, thread name) of every ingest the line runs."""
    seen: list[tuple[str, str]] = []
    line = core._ingest
    real = line.index_repo

    def index_repo(*args: Any, **kwargs: Any) -> Any:
        seen.append((kwargs["trigger"], threading.current_thread().name))
        return real(*args, **kwargs)

    monkeypatch.setattr(line, "index_repo", index_repo)
    return seen


def test_a_chat_reindex_runs_while_every_answer_worker_is_busy(
    core: Core, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = spy_on_runs(core, monkeypatch)
    monkeypatch.setattr(core, "_queue", AnswerQueue(workers=1, size=1))
    release = threading.Event()
    blocker = core.submit(lambda: release.wait(timeout=60))
    try:
        result = core.run_command("reindex shop", ADMIN)
        assert result.later is not None and result.text == ""
        assert "shop: up to date" in result.final_text(timeout=60)
        assert not blocker.future.done()  # the only answer worker was never free
    finally:
        release.set()
    assert runs == [("slack command", runs[0][1])]
    assert runs[0][1].startswith("codecite-ingest")


def test_refusals_come_at_once_not_from_the_line(core: Core) -> None:
    with pytest.raises(PermissionDenied):
        core.reindex("shop", Context("slack", "U1", "C1"))  # is_admin is the adapter's word
    with pytest.raises(ScopeError):
        core.reindex("nope", ADMIN)


def test_scheduled_forwarded_and_chat_runs_use_the_same_line(
    core: Core, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = spy_on_runs(core, monkeypatch)
    sched = IngestScheduler(core, scheduler=BackgroundScheduler(timezone="UTC"))
    done: list[str] = []  # jobs finished (their instance released first)
    sched.scheduler.add_listener(lambda event: done.append(event.job_id), EVENT_JOB_EXECUTED)
    sched.install()  # the new job is due now: its first run starts with the scheduler
    sched.start()
    try:
        wait_for(lambda: done.count(JOB_PREFIX + "shop") == 1)
        assert sched.trigger_now("shop")  # the scheduled job, brought forward
        wait_for(lambda: done.count(JOB_PREFIX + "shop") == 2)
    finally:
        sched.shutdown()
    core.run_command("reindex", ADMIN).final_text(timeout=60)
    assert [trigger for trigger, _ in runs] == ["schedule", "schedule", "slack command"]
    assert all(thread.startswith("codecite-ingest") for _, thread in runs)
    last = core.runs.last("shop")
    assert last is not None and last.ok and last.trigger == "slack command"


def wait_for(probe: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not probe():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.05)
