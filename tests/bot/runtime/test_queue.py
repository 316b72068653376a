"""The answer queue: places in line, a bounded wait, "busy" beyond it, and no lost jobs."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import CancelledError

import pytest

from bot.config import LimitsConfig
from bot.errors import BotError, RateLimited
from bot.runtime.queue import AnswerQueue, QueueClosed

WAIT = 10  # seconds; only reached when the code under test is broken


class Jobs:
    """Jobs that block until released, recording how many run at once."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Semaphore(0)
        self._lock = threading.Lock()
        self.running = 0
        self.peak = 0

    def blocking(self, value: int) -> Callable[[], int]:
        def job() -> int:
            with self._lock:
                self.running += 1
                self.peak = max(self.peak, self.running)
            self.started.release()
            try:
                assert self.release.wait(WAIT), "never released"
                return value
            finally:
                with self._lock:
                    self.running -= 1

        return job

    def wait_started(self, n: int) -> None:
        for _ in range(n):
            assert self.started.acquire(timeout=WAIT), "a job did not start"


@pytest.fixture
def jobs() -> Iterator[Jobs]:
    j = Jobs()
    yield j
    j.release.set()


def test_positions_busy_message_and_results(jobs: Jobs):
    queue = AnswerQueue(workers=2, size=3)
    tickets = [queue.submit(jobs.blocking(n)) for n in range(5)]
    assert [t.position for t in tickets] == [0, 0, 1, 2, 3]
    jobs.wait_started(2)
    assert (queue.running, queue.waiting) == (2, 3)
    with pytest.raises(RateLimited) as info:
        queue.submit(jobs.blocking(99))
    assert info.value.user_message == (
        "codecite is busy right now (3 questions waiting); please try again in a minute."
    )
    jobs.release.set()
    assert [t.future.result(WAIT) for t in tickets] == [0, 1, 2, 3, 4]
    assert jobs.peak == 2
    queue.shutdown()
    assert (queue.running, queue.waiting) == (0, 0)


def test_line_moves_up_as_jobs_finish():
    queue = AnswerQueue(workers=1, size=2)
    gates = [threading.Event() for _ in range(3)]
    tickets = [queue.submit(gate.wait) for gate in gates]
    assert [t.position for t in tickets] == [0, 1, 2]
    with pytest.raises(RateLimited):
        queue.submit(lambda: None)
    gates[0].set()
    assert tickets[0].future.result(WAIT) is True
    # job 2 runs (or is about to), job 3 waits: a newcomer is #2 in line
    late = queue.submit(lambda: "late")
    assert late.position == 2
    for gate in gates:
        gate.set()
    assert late.future.result(WAIT) == "late"
    queue.shutdown()


def test_size_zero_means_no_waiting(jobs: Jobs):
    queue = AnswerQueue(workers=2, size=0)
    first = queue.submit(jobs.blocking(1))
    second = queue.submit(jobs.blocking(2))
    assert (first.position, second.position) == (0, 0)
    with pytest.raises(RateLimited, match=r"\(0 questions waiting\)"):
        queue.submit(jobs.blocking(3))
    jobs.release.set()
    assert second.future.result(WAIT) == 2
    queue.shutdown()


def test_a_failing_job_reports_through_its_future_and_the_worker_survives():
    queue = AnswerQueue(workers=1, size=4)

    def boom() -> int:
        raise BotError("The index could not be read.")

    bad = queue.submit(boom)
    good = queue.submit(lambda: 42)
    with pytest.raises(BotError, match="could not be read"):
        bad.future.result(WAIT)
    assert good.future.result(WAIT) == 42
    queue.shutdown()


def test_a_cancelled_waiting_job_never_runs(jobs: Jobs):
    queue = AnswerQueue(workers=1, size=4)
    queue.submit(jobs.blocking(1))
    ran = threading.Event()
    queued = queue.submit(ran.set)
    assert queued.future.cancel()
    after = queue.submit(lambda: "after")
    jobs.release.set()
    assert after.future.result(WAIT) == "after"
    assert not ran.is_set()
    with pytest.raises(CancelledError):
        queued.future.result(0)
    queue.shutdown()


def test_shutdown_finishes_accepted_jobs_and_refuses_new_ones(jobs: Jobs):
    queue = AnswerQueue(workers=1, size=4)
    tickets = [queue.submit(jobs.blocking(n)) for n in range(3)]
    jobs.wait_started(1)
    jobs.release.set()
    queue.shutdown(wait=True)
    assert all(t.future.done() for t in tickets)
    assert [t.future.result(0) for t in tickets] == [0, 1, 2]
    with pytest.raises(QueueClosed) as info:
        queue.submit(lambda: None)
    assert isinstance(info.value, RateLimited)
    assert "restarting" in info.value.user_message


def test_shutdown_can_cancel_the_waiting_line(jobs: Jobs):
    queue = AnswerQueue(workers=1, size=4)
    running = queue.submit(jobs.blocking(1))
    waiting = [queue.submit(jobs.blocking(n)) for n in range(2, 5)]
    jobs.wait_started(1)
    queue.shutdown(wait=False, cancel_pending=True)
    assert all(t.future.cancelled() for t in waiting)
    jobs.release.set()
    assert running.future.result(WAIT) == 1
    queue.shutdown(wait=True)  # idempotent
    assert jobs.peak == 1


def test_a_job_may_shut_down_its_own_queue():
    queue = AnswerQueue(workers=1, size=1)
    ticket = queue.submit(lambda: queue.shutdown(wait=True))
    assert ticket.future.result(WAIT) is None


def test_threads_start_on_demand_and_never_exceed_workers():
    before = {t.name for t in threading.enumerate()}
    queue = AnswerQueue(workers=3, size=100, name="wq-demand")
    assert not [t for t in threading.enumerate() if t.name.startswith("wq-demand")]
    assert queue.submit(lambda: 1).future.result(WAIT) == 1
    tickets = [queue.submit(lambda n=n: n * n) for n in range(60)]
    assert [t.future.result(WAIT) for t in tickets] == [n * n for n in range(60)]
    ours = [t for t in threading.enumerate() if t.name.startswith("wq-demand")]
    assert 1 <= len(ours) <= 3
    queue.shutdown()
    assert not [t for t in threading.enumerate() if t.name.startswith("wq-demand")]
    assert {t.name for t in threading.enumerate()} <= before | {threading.current_thread().name}


def test_many_submitters_at_once_lose_nothing():
    queue = AnswerQueue(workers=4, size=10_000)
    submitters = 8
    start = threading.Barrier(submitters)
    tickets: list[list[int]] = [[] for _ in range(submitters)]
    futures = []
    lock = threading.Lock()

    def submit_many(s: int) -> None:
        start.wait()
        for n in range(100):
            ticket = queue.submit(lambda s=s, n=n: (s, n))
            with lock:
                futures.append(ticket.future)
                tickets[s].append(ticket.position)

    threads = [threading.Thread(target=submit_many, args=(s,)) for s in range(submitters)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    results = {f.result(WAIT) for f in futures}
    assert results == {(s, n) for s in range(submitters) for n in range(100)}
    assert all(p >= 0 for ps in tickets for p in ps)
    queue.shutdown()


def test_from_config_and_argument_checks():
    queue = AnswerQueue.from_config(LimitsConfig(workers=3, queue_size=7))
    assert (queue.workers, queue.size) == (3, 7)
    queue.shutdown()
    with pytest.raises(ValueError):
        AnswerQueue(workers=0, size=1)
    with pytest.raises(ValueError):
        AnswerQueue(workers=1, size=-1)
