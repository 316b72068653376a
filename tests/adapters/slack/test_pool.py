from __future__ import annotations

import threading

from adapters.slack.pool import WorkerPool


def test_pool_refuses_beyond_capacity_and_runs_what_it_accepted() -> None:
    pool = WorkerPool(workers=1, queue_size=1)
    gate = threading.Event()
    done: list[int] = []

    def job(n: int) -> None:
        gate.wait(timeout=10)
        done.append(n)

    assert pool.submit(lambda: job(1))
    assert pool.submit(lambda: job(2))
    assert not pool.submit(lambda: job(3))  # one running + one queued = full
    gate.set()
    pool.close(wait=True)
    assert sorted(done) == [1, 2]
    assert not pool.submit(lambda: job(4))  # closed


def test_pool_survives_a_failing_job() -> None:
    pool = WorkerPool(workers=1, queue_size=0)
    ran = threading.Event()

    def boom() -> None:
        raise RuntimeError("boom")

    assert pool.submit(boom)
    pool.close(wait=True)
    pool = WorkerPool(workers=1, queue_size=0)
    assert pool.submit(ran.set)
    pool.close(wait=True)
    assert ran.is_set()
