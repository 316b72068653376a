"""A bounded worker pool: slow answers run here, never on the threads that acknowledge Slack.

Bolt acknowledges on its own listener threads; if answers ran there, a burst of
slow questions would delay the next acknowledgement past Slack's 3 seconds.
The pool holds at most `workers + queue_size` jobs; beyond that `submit`
refuses at once so the caller can say "busy" instead of queueing forever.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

log = logging.getLogger(__name__)


class WorkerPool:
    def __init__(self, *, workers: int, queue_size: int, name: str = "codecite-worker") -> None:
        if workers < 1 or queue_size < 0:
            raise ValueError("workers must be >= 1 and queue_size >= 0")
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name)
        self._slots = threading.BoundedSemaphore(workers + queue_size)
        self._closed = False

    def submit(self, job: Callable[[], None]) -> bool:
        """Run `job` in the background; False (and nothing runs) when the pool is full or closed."""
        if self._closed or not self._slots.acquire(blocking=False):
            return False
        try:
            self._executor.submit(self._run, job)
        except RuntimeError:  # shut down between the check and the submit
            self._slots.release()
            return False
        return True

    def _run(self, job: Callable[[], None]) -> None:
        try:
            job()
        except Exception:
            # Jobs report their own failures to users; this only keeps the worker alive.
            log.exception("background job failed")
        finally:
            self._slots.release()

    def close(self, *, wait: bool = True) -> None:
        """Stop taking jobs; with `wait`, finish the ones already accepted (they were promised)."""
        self._closed = True
        self._executor.shutdown(wait=wait)
