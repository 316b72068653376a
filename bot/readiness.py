"""Whether this process can answer now: every dependency it needs answers (`/readyz`).

    ready = Readiness([("index", index.repo_states), ("stores", stores.ping), ...])
    ready()          # "" when every check passed, else why not (the first that failed)

Each check is the cheapest call that touches the real thing: the index's repository
states (the local file, or the state kept beside a remote index), the stores' round
trip, and every remote service behind them (`Reachable`: the index service's
statistics, the model endpoint's list of models).
The reason is one sentence for a probe (the operator's: it may name the setting to
check and the host), never a path, secret or traceback; the detail goes to the log.

Probes come often (every few seconds, from several places) and a dependency that is
away can take its whole timeout to say so, so the result is kept for `ttl` seconds and
the checks run on a thread of their own: a probe waits for them at most `wait` seconds,
and otherwise gets the last result (or "checking ..." before there is one). One run of
the checks at a time, whoever asks.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from bot.errors import BotError

log = logging.getLogger(__name__)

TTL = 5.0  # seconds a result is kept
WAIT = 2.0  # seconds a probe waits for checks under way
CHECKING = "checking its dependencies"

Check = tuple[str, Callable[[], object]]  # (what it is, the call that raises when it is away)


@runtime_checkable
class Reachable(Protocol):
    """A client of a remote service that can say cheaply whether the service answers."""

    @property
    def service(self) -> str:
        """What a probe's sentence calls the service ("Pinecone", "the model endpoint")."""
        ...

    def ping(self) -> None:
        """Raise BotError unless the service answers now (one small request)."""
        ...


class Readiness:
    """`readiness()` -> "" or the first failing check's sentence; thread-safe, cached."""

    def __init__(
        self,
        checks: Sequence[Check],
        *,
        ttl: float = TTL,
        wait: float = WAIT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._checks = tuple(checks)
        self._ttl = ttl
        self._wait = wait
        self._clock = clock
        self._lock = threading.Lock()
        self._reason: str | None = None  # None: never checked
        self._checked_at = 0.0
        self._running: threading.Event | None = None

    def __call__(self) -> str:
        with self._lock:
            if self._reason is not None and self._clock() - self._checked_at < self._ttl:
                return self._reason
            done = self._running
            if done is None:
                done = self._running = threading.Event()
                threading.Thread(
                    target=self._run, args=(done,), name="readiness", daemon=True
                ).start()
        done.wait(self._wait)
        with self._lock:
            return self._reason if self._reason is not None else CHECKING

    def _run(self, done: threading.Event) -> None:
        reason = first_failure(self._checks)
        with self._lock:
            self._reason, self._checked_at, self._running = reason, self._clock(), None
        done.set()


def first_failure(checks: Sequence[Check]) -> str:
    """ "" when every check passes, else why not (the first that failed)."""
    for what, check in checks:
        try:
            check()
        except BotError as exc:
            log.warning("not ready: %s: %s", what, exc.detail or exc.operator_message)
            return f"{what}: {exc.operator_message}"
        except Exception as exc:  # a probe gets a sentence, the log the rest
            log.warning("not ready: %s: %s", what, type(exc).__name__, exc_info=True)
            return f"{what}: unreachable"
    return ""


def checks_for(
    index: object,
    repo_states: Callable[[], object],
    stores_ping: Callable[[], object],
    model: object | None,
) -> list[Check]:
    """What a process that answers needs: its index (and the service behind it), its
    stores, and the model endpoint when one is configured (`model`: the chat model, else
    the embedder)."""
    checks: list[Check] = [("index", repo_states), ("stores", stores_ping)]
    for remote in (index, model):
        if isinstance(remote, Reachable):
            checks.append((remote.service, remote.ping))
    return checks
