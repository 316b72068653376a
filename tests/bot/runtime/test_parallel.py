"""ordered_map: worker processes beside the caller, results in order, failures contained."""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import TypeVar

import pytest

from bot.runtime import parallel
from bot.runtime.parallel import default_workers, ordered_map

log = logging.getLogger(__name__)
R = TypeVar("R")


# Work functions live at module level: a worker process imports them by name.
def square(batch: list[int]) -> list[tuple[int, int]]:
    return [(n * n, os.getpid()) for n in batch]


def shout(batch: list[int]) -> list[int]:
    for n in batch:
        log.warning("item %d in a %s", n, "worker" if in_worker() else "caller")
    return batch


def refuse_seven(batch: list[int]) -> list[int]:
    if 7 in batch:
        raise ValueError("seven is not welcome")
    return batch


def die_in_worker(batch: list[int]) -> list[int]:
    if in_worker():
        os._exit(3)  # as a worker killed by the OOM killer would
    return batch


def lose_one(batch: list[int]) -> list[int]:
    return batch[1:]


def in_worker() -> bool:
    return multiprocessing.parent_process() is not None


def one(_: int) -> int:
    return 1


def forced(work: Callable[[list[int]], list[R]], items: Iterable[int]) -> Generator[R, None, None]:
    """Always with one worker, whatever this machine has."""
    return ordered_map(work, items, weight=one, batch_weight=4, parallel_above=0, workers=1)


def test_small_inputs_stay_in_this_process() -> None:
    got = list(ordered_map(square, range(50), weight=one, batch_weight=8))
    assert [n for n, _ in got] == [i * i for i in range(50)]
    assert {pid for _, pid in got} == {os.getpid()}


def test_results_come_in_order_from_the_caller_and_a_worker() -> None:
    got = list(forced(square, range(400)))
    assert [n for n, _ in got] == [i * i for i in range(400)]
    assert len({pid for _, pid in got}) == 2  # the caller worked too, and so did the worker


def test_nothing_to_do_starts_no_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "_Pool", None)  # any attempt to start a pool fails
    assert list(forced(square, [])) == []


def test_worker_log_records_reach_the_callers_handlers(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=__name__):
        assert list(forced(shout, range(40))) == list(range(40))
    messages = [r.getMessage() for r in caplog.records if r.name == __name__]
    assert len(messages) == 40
    assert any(m.endswith("in a worker") for m in messages)


def test_an_error_in_the_work_propagates() -> None:
    with pytest.raises(ValueError, match="seven"):
        list(forced(refuse_seven, range(100)))


def test_a_dead_worker_s_batches_are_redone_here(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=parallel.__name__):
        assert list(forced(die_in_worker, range(60))) == list(range(60))
    assert "worker process died" in caplog.text


def test_a_batch_must_give_one_result_per_item() -> None:
    with pytest.raises(ValueError, match="gave"):
        list(ordered_map(lose_one, range(5), weight=one))


def test_items_are_read_only_as_far_as_the_window() -> None:
    read = 0

    def items() -> Iterator[int]:
        nonlocal read
        for n in range(10_000):
            read = n + 1
            yield n

    results = forced(square, items())
    next(results)
    assert read <= 4 * (parallel.AHEAD + 3)  # a few batches of 4, not the whole input
    results.close()


@pytest.mark.parametrize(("cores", "workers"), [(1, 0), (2, 0), (3, 2), (4, 3), (64, 3)])
def test_workers_follow_the_cores(
    monkeypatch: pytest.MonkeyPatch, cores: int, workers: int
) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: set(range(cores)), raising=False)
    assert default_workers() == workers
