"""A bounded pool for answer work: a few workers, a short line, and "busy" beyond that.

    queue = AnswerQueue(workers=4, size=32)
    ticket = queue.submit(lambda: core.ask(text, ctx))   # may raise RateLimited
    if ticket.position:
        say(f"You're #{ticket.position} in line")
    answer = ticket.future.result()

Adapters acknowledge a platform event at once and hand the slow part here, so a
burst of questions never delays the next acknowledgement. A ticket's
`position` is its place in line when it was queued: 0 when a worker was free
and it starts at once, 1 when it is next to start, and so on. When `size` jobs
are already waiting, `submit` refuses at once with RateLimited: telling people
to come back is better than answering after they gave up.

Workers are threads started on demand (at most `workers`). A job's exception
is set on its future and never kills a worker. A queued job whose future was
cancelled is skipped.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from bot.config import LimitsConfig
from bot.errors import RateLimited
from bot.runtime import metrics

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Ticket(Generic[T]):
    """A queued job: its place in line when queued (0 = started at once) and its result."""

    position: int
    future: Future[T]


@dataclass(frozen=True, slots=True)
class _Job:
    fn: Callable[[], Any]
    future: Future[Any]


def in_line(position: int) -> str:
    """What to tell someone whose question waits behind `position - 1` others."""
    return f"You're #{position} in line; I'll answer as soon as I can."


class QueueClosed(RateLimited):
    user_message = "codecite is restarting; please ask again in a minute."
    incident = False  # nothing went wrong: no incident to look up


class AnswerQueue:
    """At most `workers` jobs run at once and at most `size` wait; thread-safe."""

    def __init__(self, workers: int, size: int, *, name: str = "codecite-answer") -> None:
        if workers < 1 or size < 0:
            raise ValueError("workers must be >= 1 and size >= 0")
        self.workers = workers
        self.size = size
        self._name = name
        self._cond = threading.Condition()
        self._jobs: deque[_Job] = deque()
        self._running = 0
        self._threads: list[threading.Thread] = []
        self._idle = 0  # threads waiting for a job
        self._closed = False

    @classmethod
    def from_config(cls, limits: LimitsConfig) -> AnswerQueue:
        return cls(limits.workers, limits.queue_size)

    @property
    def running(self) -> int:
        with self._cond:
            return self._running

    @property
    def waiting(self) -> int:
        """Jobs accepted that no worker can start yet."""
        with self._cond:
            return self._waiting()

    def submit(self, fn: Callable[[], T]) -> Ticket[T]:
        """Queue `fn`; raise RateLimited at once when `size` jobs are already waiting."""
        future: Future[T] = Future()
        with self._cond:
            if self._closed:
                raise QueueClosed(detail="answer queue is shut down")
            waiting = self._waiting()
            if self._running + len(self._jobs) >= self.workers and waiting >= self.size:
                log.warning("answer queue full: %d waiting, %d running", waiting, self._running)
                metrics.refused("busy")
                raise RateLimited(
                    f"codecite is busy right now ({waiting} questions waiting); "
                    "please try again in a minute.",
                    detail=f"queue full ({waiting} waiting)",
                )
            position = max(0, self._running + len(self._jobs) + 1 - self.workers)
            self._jobs.append(_Job(fn, future))
            self._wake_or_start_worker()
        return Ticket(position, future)

    def shutdown(self, wait: bool = True, *, cancel_pending: bool = False) -> None:
        """Take no new jobs. Queued jobs still run (they were promised) unless `cancel_pending`;
        with `wait`, return when every accepted job has finished."""
        with self._cond:
            self._closed = True
            if cancel_pending:
                while self._jobs:
                    self._jobs.popleft().future.cancel()
            self._cond.notify_all()
            threads = list(self._threads)
        if wait:
            for thread in threads:
                if thread is not threading.current_thread():  # a job may shut its own queue
                    thread.join()

    def __enter__(self) -> AnswerQueue:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown(wait=True)

    # internals ------------------------------------------------------------------------------

    def _waiting(self) -> int:  # caller holds the lock
        return max(0, self._running + len(self._jobs) - self.workers)

    def _wake_or_start_worker(self) -> None:  # caller holds the lock
        # Idle threads that were notified still count as idle until they wake up, so a
        # thread is started whenever queued jobs outnumber them (up to `workers`).
        if len(self._jobs) <= self._idle or len(self._threads) >= self.workers:
            self._cond.notify()
            return
        number = len(self._threads) + 1
        thread = threading.Thread(target=self._work, name=f"{self._name}-{number}", daemon=True)
        self._threads.append(thread)
        thread.start()

    def _work(self) -> None:
        while (job := self._next_job()) is not None:
            if not job.future.set_running_or_notify_cancel():
                self._finished()  # cancelled while it waited
                continue
            # The slot is freed before the future resolves: whoever sees the result may
            # submit again at once and must find room.
            try:
                result = job.fn()
            except BaseException as exc:  # noqa: BLE001 - delivered to whoever holds the future
                self._finished()
                job.future.set_exception(exc)
            else:
                self._finished()
                job.future.set_result(result)

    def wait_idle(self, timeout: float | None) -> bool:
        """Wait until no job runs or waits (at most `timeout` seconds); True when none does."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._running and not self._jobs, timeout)

    def _finished(self) -> None:
        with self._cond:
            self._running -= 1
            self._cond.notify_all()  # for wait_idle; idle workers re-check and sleep again

    def _next_job(self) -> _Job | None:
        with self._cond:
            while not self._jobs:
                if self._closed:
                    return None
                self._idle += 1
                self._cond.wait()
                self._idle -= 1
            self._running += 1
            return self._jobs.popleft()
