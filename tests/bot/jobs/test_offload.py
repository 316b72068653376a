"""Ingests in a child process, as `codecite serve` runs them: a real data directory, a real
git repository, the real scheduler and job runner; the parent answers from what the child
wrote, a child killed mid-ingest leaves the old index and a failed job, and stopping
leaves no process behind."""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from adapters.schedule import IngestScheduler
from bot.config import FileConfig, RepoConfig, Settings
from bot.core import Context, Core
from bot.errors import BotError
from bot.jobs.offload import Cancelled
from bot.store.jobs import RUNNING
from tests.support.gitrepo import GitRepo
from tests.support.jobs import running_jobs
from tests.support.shop import build_shop

ADMIN = Context("slack", "U1", "C1", is_admin=True)
REFUNDS = '''"""Refunds."""


def refund_partially_captured_invoice(invoice, amount):
    """Refund part of a captured invoice, never more than was captured."""
    return min(amount, invoice.captured)
'''


@pytest.fixture
def shop(make_repo: Any) -> GitRepo:
    repo: GitRepo = make_repo("shop")
    build_shop(repo)
    return repo


@pytest.fixture
def offloaded(shop: GitRepo) -> Iterator[tuple[Core, Callable[[], None]]]:
    """A Core of a configured shop whose ingests run in children, as in `serve`, and the
    function that cancels them."""
    config = FileConfig(repos=(RepoConfig(name="shop", path=str(shop.path)),))
    core = Core.from_settings(Settings(), config)
    stop = core.ingest_in_children()
    yield core, stop
    core.close()


@pytest.fixture
def core(offloaded: tuple[Core, Callable[[], None]]) -> Core:
    return offloaded[0]


@pytest.fixture
def stop_children(offloaded: tuple[Core, Callable[[], None]]) -> Callable[[], None]:
    return offloaded[1]


def found(core: Core, text: str) -> list[str]:
    return [hit.chunk.path for hit in core.search(text, ADMIN)]


def add_refunds(shop: GitRepo) -> None:
    shop.write("shop/refunds.py", REFUNDS)
    shop.commit("refunds")


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@contextmanager
def index_locked(core: Core) -> Iterator[None]:
    """Hold the index file's write lock: an ingest may read and work, but not commit."""
    conn = sqlite3.connect(core.settings.index_path, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        yield
        conn.execute("ROLLBACK")
    finally:
        conn.close()


def child_at_work(core: Core, timeout: float = 60.0) -> int:
    """The pid of the ingest child once it has the index file open (it is ingesting)."""
    index = str(core.settings.index_path.resolve())
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for child in multiprocessing.active_children():
            fds = Path(f"/proc/{child.pid}/fd")
            try:
                if any(os.path.realpath(fd) == index for fd in fds.iterdir()):
                    return int(child.pid or 0)
            except OSError:  # it is starting or has just ended
                continue
        time.sleep(0.05)
    raise AssertionError("no ingest child opened the index")


def test_a_scheduled_ingest_runs_in_a_child_and_the_parent_then_answers_from_it(
    core: Core, shop: GitRepo, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="bot.ingest")
    scheduler = IngestScheduler(core)
    scheduler.install()  # not started: the test runs the job itself
    report = scheduler.run_repo("shop", "boot")
    assert report is not None and report.files == 3
    assert "shop/webhooks.py" in found(core, "retry failed webhooks")  # the engine is built now
    assert "shop/refunds.py" not in found(core, "refund partially captured invoice")

    add_refunds(shop)
    report = scheduler.run_repo("shop", "schedule")
    assert report is not None and report.files_added == 1
    assert found(core, "refund partially captured invoice")[0] == "shop/refunds.py"
    answer = core.ask("where is refund_partially_captured_invoice defined?", ADMIN)
    assert answer.citations[0].path == "shop/refunds.py"  # the symbol table's answer too
    ingest_pids = {r.process for r in caplog.records if r.name.startswith("bot.ingest")}
    assert ingest_pids and os.getpid() not in ingest_pids  # every ingest log line: a child's
    last = core.runs.last("shop")
    assert last is not None and last.ok and last.trigger == "schedule"
    assert multiprocessing.active_children() == []


def test_progress_and_what_a_waiting_ingest_waits_for_cross_the_process_boundary(
    core: Core, shop: GitRepo
) -> None:
    stages: list[tuple[str, int, int]] = []
    notices: list[str] = []
    heard = threading.Event()
    second: list[threading.Thread] = []

    def progress(stage: str, done: int, total: int) -> None:
        stages.append((stage, done, total))
        if not second:  # the first report: this ingest holds the lock; start another
            other = threading.Thread(
                target=core.index_repo,
                args=(str(shop.path),),
                kwargs={"name": "shop", "on_wait": lambda n: (notices.append(n), heard.set())},
            )
            second.append(other)
            other.start()
            assert heard.wait(60)

    report = core.index_repo(str(shop.path), name="shop", progress=progress)
    second[0].join(60)
    assert report.files == 3 and stages
    assert all(isinstance(s, str) and d <= t for s, d, t in stages if t)
    assert len(notices) == 1
    assert notices[0].startswith("waiting for another ingest of shop to finish (started ")
    assert notices[0].endswith(" s ago by cli)")


def test_a_child_killed_mid_ingest_fails_the_job_in_one_line_and_the_old_index_answers(
    core: Core, shop: GitRepo
) -> None:
    core.index_repo(str(shop.path), name="shop")
    add_refunds(shop)
    with running_jobs(core):
        with index_locked(core):
            later = core.reindex("shop", ADMIN)
            os.kill(child_at_work(core), signal.SIGKILL)
        text = later.result(timeout=60)
        assert text == (
            "• shop: failed: The ingest's process stopped before it finished (killed by "
            "SIGKILL); the index is as it was, and the next run tries again."
        )
        assert "shop/webhooks.py" in found(core, "retry failed webhooks")
        assert "shop/refunds.py" not in found(core, "refund partially captured invoice")
        last = core.runs.last("shop")
        assert last is not None and not last.ok

        again = core.reindex("shop", ADMIN).result(timeout=60)  # the next run retries
    assert again.startswith("• shop: ") and "failed" not in again
    assert found(core, "refund partially captured invoice")[0] == "shop/refunds.py"
    assert multiprocessing.active_children() == []


def test_stopping_cancels_the_child_the_old_index_answers_and_no_process_is_left(
    core: Core, shop: GitRepo, stop_children: Callable[[], None]
) -> None:
    core.index_repo(str(shop.path), name="shop")
    before = core.index.repo_states()
    add_refunds(shop)
    with index_locked(core):
        future = core.reindex_repo("shop", trigger="schedule")
        pid = child_at_work(core)
        stop_children()
    [(name, outcome)] = future.result(timeout=60)
    assert name == "shop" and isinstance(outcome, Cancelled)
    assert gone(pid) and multiprocessing.active_children() == []
    assert core.index.repo_states() == before
    assert "shop/refunds.py" not in found(core, "refund partially captured invoice")
    last = core.runs.last("shop")
    assert last is not None and not last.ok and last.trigger == "schedule"
    with pytest.raises(BotError):  # a stopping process starts no more ingests
        core.index_repo(str(shop.path), name="shop")


def test_a_job_cancelled_at_shutdown_is_left_to_the_next_runner(
    core: Core, shop: GitRepo, stop_children: Callable[[], None]
) -> None:
    core.index_repo(str(shop.path), name="shop")
    add_refunds(shop)
    with index_locked(core), running_jobs(core):
        job_id = core.stores.jobs.enqueue("shop", "webhook", "github", quick=True)
        child_at_work(core)
        stop_children()
    job = core.stores.jobs.results([job_id])[job_id]
    assert job.state == RUNNING and not job.finished  # its lease passes; another runner takes it
    assert multiprocessing.active_children() == []
