"""Abuse and cost limits: questions per user and per channel a minute, answers a day.

    limiter = Limiter(config.limits, lambda: stores.quota)
    limiter.check(ctx)  # counts the question, or raises RateLimited with a sentence

Per-user and per-channel limits are sliding windows of 60 seconds: a key may
ask N questions in any 60-second span, and the message says exactly how long
until the oldest of those leaves the window. The daily cap counts every
accepted question across all users and resets at 00:00 UTC. A question is
counted only when every limit lets it through, so a refusal never uses up
quota. A context the adapter marked `unlimited` (the terminal: whoever runs it
owns the data directory and the API keys) is exempt. A limit of 0 disables that
limit.

The counting is the store's (`Quota`, `StoreSet.quota`: a SQLite file in the
data directory or the PostgreSQL database), so every process sharing a store
shares the limits, and a restart forgets nothing. Times are wall-clock epoch
seconds, so processes on several machines agree as far as their clocks do.

When the store fails (StoreError: the database restarting, a full disk) the
questions are counted in this process instead (`fallback`, `ProcessQuota`: the same
rules in memory), so the bot never goes silent because of its own bookkeeping and
one user still cannot flood it; without a fallback they are answered uncounted. The
store is then tried again at most every RETRY_SECONDS (a database that is down can
take its connect timeout to say so; the questions in between do not wait for it).
One warning says so per outage, and one when the shared count works again.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

from bot.config import LimitsConfig
from bot.errors import RateLimited, StoreError
from bot.runtime import metrics

log = logging.getLogger(__name__)

WINDOW_SECONDS = 60.0
RETRY_SECONDS = 15.0  # during an outage, between two tries of the store

LimitKind = Literal["user", "channel", "daily"]


@dataclass(frozen=True, slots=True)
class Refusal:
    """Which limit refused a question, and the seconds until one would be let through."""

    limit: LimitKind
    wait: float


@dataclass(frozen=True, slots=True)
class QuotaUsage:
    users: int  # keys with an accepted question within the last window
    channels: int
    answered_today: int  # accepted questions this UTC day


class Quota(Protocol):
    """The counts behind the limits (`bot.store.base.QuestionQuota` is the store's)."""

    def take(
        self,
        user_key: str,
        channel_key: str | None,
        *,
        per_user: int,
        per_channel: int,
        daily: int,
        window: float,
        now: float,
    ) -> Refusal | None:
        """Check the three limits and record the question only when all let it through,
        atomically; the first limit that refuses (user, channel, daily), or None."""
        ...

    def usage(self, *, window: float, now: float) -> QuotaUsage: ...


class Asker(Protocol):
    """What the limiter needs to know about who asks (bot.context.Context fits)."""

    @property
    def platform(self) -> str: ...

    @property
    def user(self) -> str: ...

    @property
    def channel(self) -> str: ...

    @property
    def unlimited(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class LimiterStats:
    """A snapshot for status pages and tests."""

    users: int  # keys active within the window
    channels: int
    answered_today: int
    daily_limit: int


class Limiter:
    """Per-user, per-channel and daily limits for questions, counted by a shared store.

    `quota` is called at each question (so a store that cannot be opened now is met as a
    StoreError then, and the limiter fails open, rather than at start)."""

    def __init__(
        self,
        config: LimitsConfig,
        quota: Callable[[], Quota],
        *,
        clock: Callable[[], float] = time.time,
        window: float = WINDOW_SECONDS,
        retry_after: float = RETRY_SECONDS,
        fallback: Quota | None = None,
    ) -> None:
        """`fallback`: where questions are counted while the store fails (None: uncounted)."""
        self.config = config
        self._quota = quota
        self._fallback = fallback
        self._clock = clock
        self._window = window
        self._retry_after = retry_after
        self._lock = threading.Lock()
        self._failing = False  # within an outage of the store (warned once)
        self._retry_at = 0.0  # monotonic time before which the failing store is not tried

    def check(self, ctx: Asker) -> None:
        """Count this question, or raise RateLimited (and count nothing) when a limit is hit."""
        if ctx.unlimited:
            return
        refusal = self._counted(ctx)
        if refusal is not None:
            raise self._refused(refusal)

    def _counted(self, ctx: Asker) -> Refusal | None:
        """The store's verdict; the fallback's while the store fails (or None, uncounted)."""
        # The store failed a moment ago: do not wait for it again yet.
        if not (self._failing and time.monotonic() < self._retry_at):
            try:
                refusal = self._take(self._quota(), ctx)
            except StoreError as exc:
                self._fail_open(exc)
            else:
                self._recovered()
                return refusal
        return self._take(self._fallback, ctx) if self._fallback is not None else None

    def _take(self, quota: Quota, ctx: Asker) -> Refusal | None:
        limits = self.config
        return quota.take(
            f"{ctx.platform}:{ctx.user}",
            f"{ctx.platform}:{ctx.channel}" if ctx.channel else None,
            per_user=limits.per_user_per_minute,
            per_channel=limits.per_channel_per_minute,
            daily=limits.daily_answers,
            window=self._window,
            now=self._clock(),
        )

    def stats(self) -> LimiterStats:
        usage = self._quota().usage(window=self._window, now=self._clock())
        return LimiterStats(
            users=usage.users,
            channels=usage.channels,
            answered_today=usage.answered_today,
            daily_limit=self.config.daily_answers,
        )

    def _refused(self, refusal: Refusal) -> RateLimited:
        metrics.refused(refusal.limit)
        limits = self.config
        if refusal.limit == "user":
            limit = limits.per_user_per_minute
            log.info("rate limited a user (%d a minute)", limit)
            return RateLimited(
                f"You're asking faster than {_questions(limit)} a minute; "
                f"try again in {_seconds(refusal.wait)} s.",
                detail=f"user limit {limit}/min",
            )
        if refusal.limit == "channel":
            limit = limits.per_channel_per_minute
            log.info("rate limited a channel (%d a minute)", limit)
            return RateLimited(
                f"This channel is asking faster than {_questions(limit)} "
                f"a minute; try again in {_seconds(refusal.wait)} s.",
                detail=f"channel limit {limit}/min",
            )
        limit = limits.daily_answers
        log.warning("daily answer limit of %d reached", limit)
        return RateLimited(
            f"codecite has answered its daily limit of {limit:,} questions; "
            "it resets at 00:00 UTC.",
            detail=f"daily limit {limit}",
        )

    def _fail_open(self, exc: StoreError) -> None:
        with self._lock:
            first, self._failing = not self._failing, True
            self._retry_at = time.monotonic() + self._retry_after
        if first:
            how = "counted in this process" if self._fallback is not None else "not counted"
            log.warning(
                "rate limits are %s (answering anyway) until the store works again: %s",
                how,
                exc.detail or exc.user_message,
            )

    def _recovered(self) -> None:
        if not self._failing:  # the common case: no lock taken
            return
        with self._lock:
            was, self._failing = self._failing, False
        if was:
            log.warning("rate limits are counted again")


def _questions(n: int) -> str:
    return "1 question" if n == 1 else f"{n} questions"


def _seconds(wait: float) -> int:
    """Whole seconds, rounded up: "try again in 0 s" would be a lie."""
    return max(1, math.ceil(wait - 1e-9))
