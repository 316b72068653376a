"""Bounded retries with exponential backoff and jitter, shared by every outbound client.

The policy knows nothing about any SDK. A caller passes a *classifier* that
looks at an exception and says whether it is worth retrying (and, when the
service said so, after how long). When the attempts run out, or the error is
not retryable, the last exception propagates unchanged so the caller can
translate it at its boundary (`raise ServiceError(...) from exc`).

    retrier = Retrier(RetryPolicy(max_attempts=4))
    result = retrier.call(lambda: client.post(...), classify_my_errors, what="embeddings")

Sleeps and randomness are injectable so tests run instantly and deterministically.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

# Statuses worth another try: timeout, conflict (lock contention), rate limit, server errors.
RETRYABLE_STATUSES = frozenset({408, 409, 429})


@dataclass(frozen=True, slots=True)
class Retry:
    """A classifier's verdict that an error is transient; `after` is the server's hint."""

    after: float | None = None


Classifier = Callable[[BaseException], Retry | None]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How many times and how long to wait.

    Delay before retry n (1-based) is `base_delay * multiplier**(n-1)`, capped at
    `max_delay`, then reduced by up to `jitter` (a fraction) at random so that many
    clients failing together do not retry in lockstep. A server's Retry-After is
    used as given when it is at most `max_retry_after`; a longer demand ends the
    retries (waiting minutes inside a chat reply helps nobody).
    """

    max_attempts: int = 4
    base_delay: float = 0.5
    multiplier: float = 2.0
    max_delay: float = 20.0
    jitter: float = 0.5
    max_retry_after: float = 60.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if self.base_delay < 0 or self.max_delay < 0 or self.max_retry_after < 0:
            raise ValueError("delays must not be negative")
        if not 0 <= self.jitter <= 1:
            raise ValueError("jitter is a fraction between 0 and 1")
        if self.multiplier < 1:
            raise ValueError("multiplier must be at least 1")

    def backoff(self, retry_number: int, rand: float) -> float:
        """Seconds to wait before retry `retry_number` (1-based); `rand` is uniform in [0, 1)."""
        raw = self.base_delay * self.multiplier ** max(0, retry_number - 1)
        capped = min(self.max_delay, raw)
        return capped * (1.0 - self.jitter * rand)

    def wait_for(self, retry_number: int, verdict: Retry, rand: float) -> float | None:
        """The wait before the next attempt, or None when the server asks for too long."""
        if verdict.after is None:
            return self.backoff(retry_number, rand)
        if verdict.after > self.max_retry_after:
            return None
        return max(0.0, verdict.after)


class Retrier:
    """Runs a callable under a RetryPolicy. Thread-safe: it holds no per-call state."""

    def __init__(
        self,
        policy: RetryPolicy | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.policy = policy or RetryPolicy()
        self._sleep = sleep
        self._rand = rand

    def __repr__(self) -> str:
        return f"Retrier({self.policy!r})"

    def call(self, fn: Callable[[], T], classify: Classifier, *, what: str = "call") -> T:
        """Return fn()'s result, retrying transient failures; re-raise the last error otherwise."""
        attempt = 1
        while True:
            try:
                return fn()
            except Exception as exc:
                verdict = classify(exc)
                if verdict is None:
                    raise
                wait = self._next_wait(attempt, verdict)
                if wait is None:  # the error goes on to the caller, who reports it once
                    log.info("%s failed after %d attempt(s): %s", what, attempt, _kind(exc))
                    raise
                log.info(
                    "%s attempt %d failed (%s); retrying in %.2fs", what, attempt, _kind(exc), wait
                )
                self._sleep(wait)
                attempt += 1

    def _next_wait(self, attempt: int, verdict: Retry) -> float | None:
        if attempt >= self.policy.max_attempts:
            return None
        return self.policy.wait_for(attempt, verdict, self._rand())


def _kind(exc: BaseException) -> str:
    # The class name only: exception text may echo request bodies or credentials.
    status = getattr(exc, "status_code", None)
    name = type(exc).__name__
    return f"{name} {status}" if isinstance(status, int) else name


def is_retryable_status(status: int) -> bool:
    return status in RETRYABLE_STATUSES or 500 <= status <= 599


def retry_after_seconds(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds the server asked us to wait: `retry-after-ms`, `retry-after` (seconds or date)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)
