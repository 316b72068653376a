"""The job runner: claims re-ingest jobs from the shared table and runs them on the ingest line.

    runner = JobRunner(stores.jobs, line, lease=60, poll=1)
    runner.start()   # a thread: claim, run, heartbeat, finish
    runner.stop()    # stop claiming; jobs under way finish first

It runs in the scheduler's process (`codecite schedule`, or `codecite serve` with the
scheduler). Each job goes through `IngestLine.submit`, so it holds the repository's
cross-process lock and is written to the run log like every ingest: two runners on two
machines never ingest one repository at once. While a job runs, the runner heartbeats
it every third of its lease; if this process dies, the heartbeats stop and another
runner takes the job over once the lease has passed (the index it left answers
meanwhile: an ingest only commits when it is whole). A job whose ingest was cancelled
because this process is stopping (`bot.jobs.offload`) is left the same way. The result
is recorded as the text `reindex` shows (`bot.reports.reindex_text`), for whoever
waits for it.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future

from bot.errors import BotError
from bot.jobs.line import WORKERS, IngestLine, Outcome
from bot.jobs.offload import Cancelled
from bot.reports import reindex_text
from bot.runtime import metrics
from bot.store.base import IngestJobs
from bot.store.jobs import Job

log = logging.getLogger(__name__)

BACKOFF = 5.0  # seconds to wait after the job table could not be read
_UNEXPECTED = "The ingest failed unexpectedly; see the log."


def runner_name() -> str:
    """Who holds a job: host, process and a random part (a pid can be reused)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class JobRunner:
    """Claims jobs while it has a free slot, heartbeats those it runs, records their results."""

    def __init__(
        self,
        jobs: IngestJobs,
        line: IngestLine,
        *,
        lease: float,
        poll: float,
        slots: int = WORKERS,
        owner: str | None = None,
    ) -> None:
        self.owner = owner or runner_name()
        self.on_finish: Callable[[], None] = lambda: None  # called after each recorded result
        self._jobs = jobs
        self._line = line
        self._lease = lease
        self._poll = poll
        self._slots = slots
        self._running: dict[int, Job] = {}
        self._claimed_at: dict[int, float] = {}  # monotonic, for the metrics
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="codecite-jobs", daemon=True)
        self._thread.start()
        log.info("job runner %s started (lease %.0fs)", self.owner, self._lease)

    def wake(self) -> None:
        """Look at the table now (a job was just queued in this process)."""
        self._wake.set()

    def stop(self, timeout: float | None = None) -> None:
        """Claim no more; wait (heartbeating) for the jobs under way, at most `timeout`."""
        self._stopping = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def claim_one(self) -> bool:
        """Claim one job and start it on the line; False when none was runnable."""
        try:
            job = self._jobs.claim(self.owner, self._lease)
        except BotError as exc:
            log.warning("job table not read: %s", exc.detail or exc.user_message)
            self._wake.wait(BACKOFF)
            return False
        if job is None:
            return False
        log.info(
            "job %d: re-ingesting %s (%s, attempt %d)", job.id, job.repo, job.trigger, job.attempts
        )
        with self._lock:
            self._running[job.id] = job
            self._claimed_at[job.id] = time.monotonic()
        try:
            targets = self._line.targets([job.repo])
        except BotError as exc:  # its repository's state could not be read
            self._finish(job, ok=False, text=f"• {job.repo}: failed: {exc.user_message}")
            return True
        if not targets:
            self._finish(job, ok=False, text=f"• {job.repo}: failed: codecite does not know it.")
            return True
        future = self._line.submit(targets, trigger=job.trigger, quick=job.quick)
        future.add_done_callback(lambda done: self._done(job, done))
        return True

    # -- the runner's thread -----------------------------------------------------------------

    def _loop(self) -> None:
        while True:
            try:
                self._run_loop()
                return
            except Exception:  # a bug must not leave the process without a runner
                log.exception("job runner %s failed; going on", self.owner)
                self._wake.wait(BACKOFF)

    def _run_loop(self) -> None:
        beat_every = self._lease / 3
        next_beat = time.monotonic() + beat_every
        while True:
            self._wake.clear()  # before looking: a wake-up from now on is not lost
            with self._lock:
                busy = len(self._running)
            if self._stopping and not busy:
                return
            if time.monotonic() >= next_beat:
                self._heartbeat()
                next_beat = time.monotonic() + beat_every
            if not self._stopping and busy < self._slots and self.claim_one():
                continue  # maybe more are waiting
            self._wake.wait(min(self._poll, max(0.0, next_beat - time.monotonic())))

    def _heartbeat(self) -> None:
        with self._lock:
            running = list(self._running)
        for job_id in running:
            try:
                if not self._jobs.heartbeat(job_id, self.owner):
                    log.warning("job %d was taken over by another runner", job_id)
            except BotError as exc:
                log.warning("job %d: heartbeat not recorded: %s", job_id, exc.detail)

    def _done(self, job: Job, future: Future[list[Outcome]]) -> None:
        try:
            outcomes = future.result()
        except Exception:  # a bug in the ingest: the asker still gets an answer
            log.exception("job %d: the ingest of %s failed unexpectedly", job.id, job.repo)
            self._finish(job, ok=False, text=f"• {job.repo}: failed: {_UNEXPECTED}")
            return
        if any(isinstance(outcome, Cancelled) for _, outcome in outcomes):
            # This process is stopping: the job stays claimed, and the next runner takes it
            # over once its lease has passed, as if this process had died.
            log.info("job %d: %s left for the next runner (stopping)", job.id, job.repo)
            self._release(job, "left")
            return
        ok = all(not isinstance(outcome, BotError) for _, outcome in outcomes)
        self._finish(job, ok=ok, text=reindex_text(outcomes))

    def _finish(self, job: Job, *, ok: bool, text: str) -> None:
        try:
            if not self._jobs.finish(job.id, self.owner, ok=ok, text=text):
                log.warning("job %d: finished, but another runner had taken it over", job.id)
        except BotError as exc:  # its lease runs out and another runner does it again
            log.warning("job %d: result not recorded: %s", job.id, exc.detail)
        self._release(job, "ok" if ok else "failed")

    def _release(self, job: Job, outcome: str) -> None:
        with self._lock:
            self._running.pop(job.id, None)
            claimed = self._claimed_at.pop(job.id, time.monotonic())
        metrics.job_done(outcome, time.monotonic() - claimed)
        self.on_finish()
        self._wake.set()
