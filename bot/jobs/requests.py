"""Reindex requests: a job recorded per repository, and the text its asker waits for.

    requests = ReindexRequests(lambda: stores.jobs, poll=1.0)
    later = requests.request(targets, trigger="slack command", requested_by="U1")
    later.result()   # "• shop: 1611539, 2 files updated, 0 removed, +3/-1 chunks in 0.4s"

The process that asks (a web process) never ingests: it records jobs, and a runner
in the scheduler's process (`bot.jobs.runner`) runs them. One watcher thread per
process polls the rows this process is waiting for and resolves each request's
Future when all its jobs have finished, so the result reaches the chat that asked,
wherever the job ran. A job no runner has started within UNCLAIMED_AFTER seconds is
reported as such (`NOT_STARTED`) and stays queued: a scheduler that comes up later
runs it. A push (`enqueue`) waits for nothing.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass

from bot.errors import BotError
from bot.jobs.line import Target
from bot.jobs.runner import JobRunner
from bot.reports import reindex_text
from bot.store.base import IngestJobs
from bot.store.jobs import QUEUED, Job

log = logging.getLogger(__name__)

UNCLAIMED_AFTER = 60.0  # seconds before the asker hears that no scheduler took the job
WAIT_AT_MOST = 1800.0  # Slack's response_url and Discord's follow-ups expire about then
NOT_STARTED = (
    "• {}: queued, but no scheduler has started it within a minute; "
    "it stays queued and runs when the scheduler is back."
)
STILL_RUNNING = "• {}: still running after {:.0f} minutes; `status` shows how it ends."
LOST = "• {}: the job's record is gone; `status` shows the last run."
STOPPED = "• {}: this process stopped before the job finished; `status` shows how it ends."


@dataclass(frozen=True, slots=True)
class _Waiter:
    ids: tuple[int, ...]
    names: tuple[str, ...]
    future: Future[str]
    since: float


class ReindexRequests:
    """Records jobs (`enqueue`, `request`) and resolves the futures of `request`."""

    def __init__(
        self,
        jobs: Callable[[], IngestJobs],
        *,
        poll: float,
        unclaimed_after: float = UNCLAIMED_AFTER,
        wait_at_most: float = WAIT_AT_MOST,
    ) -> None:
        self._jobs = jobs  # opened on first use: a process that never asks never opens it
        self._poll = poll
        self._unclaimed_after = unclaimed_after
        self._wait_at_most = wait_at_most
        self._waiters: list[_Waiter] = []
        self._listeners: list[Callable[[], None]] = []
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = False

    def attach(self, runner: JobRunner) -> JobRunner:
        """A runner in this process: it looks at once at jobs recorded here, and the
        watcher at once at jobs it finished."""
        self._listeners.append(runner.wake)
        runner.on_finish = self.wake
        return runner

    def enqueue(
        self, name: str, *, trigger: str, requested_by: str = "", quick: bool = False
    ) -> int:
        """Record a job for `name` (or join its queued one); its id. StoreError when the
        job table cannot be written."""
        job_id = self._jobs().enqueue(name, trigger, requested_by, quick=quick)
        for listener in self._listeners:
            listener()
        return job_id

    def request(self, targets: Sequence[Target], *, trigger: str, requested_by: str) -> Future[str]:
        """One job per target; the future's result is the text of their runs."""
        future: Future[str] = Future()
        if not targets:
            future.set_result(reindex_text([]))
            return future
        ids = tuple(
            self.enqueue(t.name, trigger=trigger, requested_by=requested_by) for t in targets
        )
        waiter = _Waiter(ids, tuple(t.name for t in targets), future, time.monotonic())
        with self._lock:
            self._waiters.append(waiter)
            if self._thread is None and not self._closed:
                self._thread = threading.Thread(
                    target=self._watch, name="codecite-job-watch", daemon=True
                )
                self._thread.start()
        return future

    def wake(self) -> None:
        """Look at the job table now (a runner of this process finished a job)."""
        self._wake.set()

    def close(self) -> None:
        """Stop watching; whoever still waits is told the job goes on without them."""
        with self._lock:
            self._closed = True
            waiters, self._waiters = self._waiters, []
            thread = self._thread
        self._wake.set()
        if thread is not None:
            thread.join(timeout=10)
        for waiter in waiters:
            waiter.future.set_result("\n".join(STOPPED.format(n) for n in waiter.names))

    def _watch(self) -> None:
        while True:
            self._wake.wait(self._poll)
            self._wake.clear()
            with self._lock:
                if self._closed or not self._waiters:
                    self._thread = None
                    return
                waiters = list(self._waiters)
            try:
                jobs = self._jobs().results([i for w in waiters for i in w.ids])
            except BotError as exc:  # the database is away: keep waiting
                log.warning("job results not read: %s", exc.detail or exc.user_message)
                continue
            now = time.monotonic()
            for waiter in waiters:
                text = self._verdict(waiter, jobs, now - waiter.since)
                if text is not None:
                    with self._lock:
                        self._waiters.remove(waiter)
                    waiter.future.set_result(text)

    def _verdict(self, waiter: _Waiter, jobs: Mapping[int, Job], waited: float) -> str | None:
        """The text for the asker once every job has an answer; None: not yet."""
        lines = []
        for job_id, name in zip(waiter.ids, waiter.names, strict=True):
            job = jobs.get(job_id)
            if job is None:
                lines.append(LOST.format(name))
            elif job.finished:
                lines.append(job.text)
            elif job.state == QUEUED and waited >= self._unclaimed_after:
                lines.append(NOT_STARTED.format(name))
            elif waited >= self._wait_at_most:
                lines.append(STILL_RUNNING.format(name, self._wait_at_most / 60))
            else:
                return None
        return "\n".join(lines)
