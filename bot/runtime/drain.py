"""Stopping within a deadline: no new question is taken, the answers under way finish
within a grace, and each one still unfinished then ends with one honest line.

    drain = Drain(queue, interrupt=close_model_clients)
    drain.run(grace=25.0)   # at SIGTERM: True when every answer finished in time

The platforms give a process 30 seconds between SIGTERM and SIGKILL (Heroku, Render, a
compose `stop_grace_period: 30s`). So: `begin` (readiness fails from now on, a load
balancer routes elsewhere; the answer line takes no new work, whose askers hear that
codecite is restarting), then wait up to `grace` for the line to empty. What is still
under way then is told to stop (`restart`): the model clients are closed, which ends
every model request in flight at once; a stream that breaks that way ends with
RESTARTED instead of its cut-off sentence, a question not started yet is answered with
it, and any other failure from now on is that sentence too (`Restarted`). The line then
gets FINAL seconds to post those endings.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from bot.errors import BotError
from bot.runtime.queue import AnswerQueue

log = logging.getLogger(__name__)

RESTARTED = "codecite was restarted while answering; ask again."
FINAL = 3.0  # seconds the answers told to stop have to post their last line


class Restarted(BotError):
    user_message = RESTARTED
    incident = False  # nothing went wrong: no incident id to look up


class Drain:
    """The process's stop: `begin`, `wait`, `restart` (or all three: `run`); thread-safe."""

    def __init__(
        self,
        queue: AnswerQueue,
        *,
        interrupt: Callable[[], None],
        stopped: threading.Event | None = None,
    ) -> None:
        """`stopped` is set by `restart`: model requests waited for give up on it
        (`bot.llm.interruptible`); `interrupt` closes what else can be closed."""
        self._queue = queue
        self._interrupt = interrupt
        self.stopped = stopped or threading.Event()
        self._draining = False
        self._restarted = False
        self._lock = threading.Lock()  # one `run` at a time: a second caller waits for it
        self._finished: bool | None = None

    @property
    def draining(self) -> bool:
        return self._draining

    @property
    def restarted(self) -> bool:
        return self._restarted

    def begin(self) -> None:
        """Take no new question (readiness fails); the answers under way go on."""
        if not self._draining:
            self._draining = True
            self._queue.shutdown(wait=False)
            log.info("stopping: no new questions; answers under way may finish")

    def wait(self, seconds: float) -> bool:
        """Wait up to `seconds` for the answer line to be empty; True when it is."""
        return self._queue.wait_idle(max(0.0, seconds))

    def restart(self) -> None:
        """The grace is over: every answer still under way ends now, with RESTARTED."""
        self._restarted = True
        self.stopped.set()
        running, waiting = self._queue.running, self._queue.waiting
        log.warning("stopping: %d answers still under way end now (%d waiting)", running, waiting)
        self._interrupt()

    def run(self, grace: float, final: float = FINAL) -> bool:
        """The whole stop (idempotent); True when every answer finished within `grace`."""
        with self._lock:
            if self._finished is None:
                self.begin()
                self._finished = self.wait(grace)
                if not self._finished:
                    self.restart()
                    self.wait(final)
            return self._finished

    def check(self) -> None:
        """Raise Restarted once the answers were told to stop (a question not started yet)."""
        if self._restarted:
            raise Restarted()

    def translated(self, exc: Exception) -> Exception:
        """What a failure is to its asker: once told to stop, the restart and nothing else."""
        return Restarted() if self._restarted and not isinstance(exc, Restarted) else exc

    def ending(self, text: str, cut_off_line: str) -> str:
        """An answer's final text: a stream broken by the restart ends with RESTARTED."""
        if self._restarted and text.endswith(cut_off_line):
            return text[: -len(cut_off_line)] + RESTARTED
        return text
