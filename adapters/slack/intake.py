"""What a listener does after Slack's acknowledgement, off Bolt's listener threads.

Bolt runs the listeners of commands and buttons on its listener pool and sends their
acknowledgement only once one of those threads has called `ack()`; events are
acknowledged before their listener starts, on the same pool. A listener that waits on
the Web API or the database there (a rate-limited reaction waits out `Retry-After`; a
database that is down waits out its connect timeout) holds a thread, and enough of them
leave the next slash command or button click unacknowledged past Slack's 3 seconds.
So every listener here acknowledges, then hands the rest to the intake: threads of
its own, as many as there is work waiting on Slack, bounded, with a line behind them.
The listener pool only ever acknowledges.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

log = logging.getLogger(__name__)

INTAKE_THREADS = 32  # work waiting on Slack or the database; answers run in the AnswerQueue


class Intake:
    """`later(fn, *args)` runs `fn(*args)` on the intake's threads; failures are logged."""

    def __init__(self, workers: int = INTAKE_THREADS) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="slack-intake")
        self._pending: set[Future[None]] = set()
        self._lock = threading.Lock()

    def later(self, fn: Callable[..., None], *args: Any) -> None:
        future = self._pool.submit(self._logged, fn, *args)
        with self._lock:
            self._pending.add(future)
        future.add_done_callback(self._done)

    def close(self) -> None:
        """Finish what was handed over (it was acknowledged: it was promised)."""
        with self._lock:
            pending = list(self._pending)
        wait(pending)
        self._pool.shutdown(wait=True)

    def _done(self, future: Future[None]) -> None:
        with self._lock:
            self._pending.discard(future)

    @staticmethod
    def _logged(fn: Callable[..., None], *args: Any) -> None:
        try:
            fn(*args)
        except Exception:  # a fault of ours: Bolt is no longer there to log it
            log.exception("a Slack listener failed after its acknowledgement")
