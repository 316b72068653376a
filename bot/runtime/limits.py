"""Abuse and cost limits: questions per user and per channel a minute, answers a day.

    limiter = Limiter(config.limits)
    limiter.check(ctx)  # counts the question, or raises RateLimited with a sentence

Per-user and per-channel limits are sliding windows of 60 seconds: a key may
ask N questions in any 60-second span, and the message says exactly how long
until the oldest of those leaves the window. The daily cap counts every
accepted question across all users and resets at 00:00 UTC. A question is
counted only when every limit lets it through, so a refusal never uses up
quota. A context the adapter marked `unlimited` (the terminal: whoever runs it
owns the data directory and the API keys) is exempt. A limit of 0 disables that
limit.

The counts live in this process's memory: several bot processes each apply the
limits on their own, and a restart forgets them. Memory stays bounded: a key
keeps at most N timestamps, keys idle for a whole window are evicted (oldest
first, in O(1) per eviction), and at most `max_keys` keys are kept per kind.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Protocol

from bot.config import LimitsConfig
from bot.errors import RateLimited

log = logging.getLogger(__name__)

WINDOW_SECONDS = 60.0
DEFAULT_MAX_KEYS = 100_000


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


def utc_today() -> date:
    return datetime.now(UTC).date()


@dataclass(frozen=True, slots=True)
class LimiterStats:
    """A snapshot for status pages and tests."""

    users: int  # keys currently tracked
    channels: int
    answered_today: int
    daily_limit: int


class SlidingWindow:
    """At most `limit` events per key in any `window` seconds. Not thread-safe on its own."""

    def __init__(self, limit: int, window: float, max_keys: int) -> None:
        self.limit = limit
        self.window = window
        self.max_keys = max_keys
        # Ordered by the time of each key's latest event, oldest first, so idle keys sit in front.
        self._events: OrderedDict[tuple[str, str], deque[float]] = OrderedDict()
        self._warned = False

    def __len__(self) -> int:
        return len(self._events)

    def wait_for(self, key: tuple[str, str], now: float) -> float:
        """Seconds until `key` may act again; 0 when it may act now."""
        self.evict_idle(now)
        events = self._events.get(key)
        if self.limit <= 0 or events is None or len(events) < self.limit:
            return 0.0
        return max(0.0, events[0] + self.window - now)

    def record(self, key: tuple[str, str], now: float) -> None:
        if self.limit <= 0:
            return
        events = self._events.get(key)
        if events is None:
            events = self._events[key] = deque(maxlen=self.limit)
        events.append(now)
        self._events.move_to_end(key)
        if len(self._events) > self.max_keys:
            # Only under a flood of distinct ids: the least recently active key starts afresh.
            self._events.popitem(last=False)
            if not self._warned:
                self._warned = True
                log.warning(
                    "rate limiter holds %d keys; forgetting the least recent", self.max_keys
                )

    def evict_idle(self, now: float) -> None:
        """Forget keys whose latest event has left the window (they are as good as new)."""
        horizon = now - self.window
        while self._events:
            key, events = next(iter(self._events.items()))
            if events[-1] > horizon:
                return
            del self._events[key]


class DailyCap:
    """At most `limit` events per UTC day. Not thread-safe on its own."""

    def __init__(self, limit: int, today: Callable[[], date]) -> None:
        self.limit = limit
        self._today = today
        self._day = today()
        self.count = 0

    def used(self) -> int:
        self._roll()
        return self.count

    def exhausted(self) -> bool:
        return self.limit > 0 and self.used() >= self.limit

    def record(self) -> None:
        self._roll()
        self.count += 1

    def _roll(self) -> None:
        day = self._today()
        if day != self._day:
            self._day, self.count = day, 0


class Limiter:
    """Per-user, per-channel and daily limits for questions; thread-safe."""

    def __init__(
        self,
        config: LimitsConfig,
        *,
        clock: Callable[[], float] = time.monotonic,
        today: Callable[[], date] = utc_today,
        max_keys: int = DEFAULT_MAX_KEYS,
    ) -> None:
        if max_keys < 1:
            raise ValueError("max_keys must be at least 1")
        self.config = config
        self._clock = clock
        self._lock = threading.Lock()
        self._users = SlidingWindow(config.per_user_per_minute, WINDOW_SECONDS, max_keys)
        self._channels = SlidingWindow(config.per_channel_per_minute, WINDOW_SECONDS, max_keys)
        self._daily = DailyCap(config.daily_answers, today)

    def check(self, ctx: Asker) -> None:
        """Count this question, or raise RateLimited (and count nothing) when a limit is hit."""
        if ctx.unlimited:
            return
        user = (ctx.platform, ctx.user)
        channel = (ctx.platform, ctx.channel)
        with self._lock:
            now = self._clock()
            self._refuse_if_limited(user, channel, bool(ctx.channel), now)
            self._users.record(user, now)
            if ctx.channel:
                self._channels.record(channel, now)
            self._daily.record()

    def _refuse_if_limited(
        self, user: tuple[str, str], channel: tuple[str, str], has_channel: bool, now: float
    ) -> None:
        wait = self._users.wait_for(user, now)
        if wait > 0:
            log.info("rate limited %s user (%d a minute)", user[0], self._users.limit)
            raise RateLimited(
                f"You're asking faster than {_questions(self._users.limit)} a minute; "
                f"try again in {_seconds(wait)} s.",
                detail=f"user limit {self._users.limit}/min",
            )
        wait = self._channels.wait_for(channel, now) if has_channel else 0.0
        if wait > 0:
            log.info("rate limited %s channel (%d a minute)", channel[0], self._channels.limit)
            raise RateLimited(
                f"This channel is asking faster than {_questions(self._channels.limit)} "
                f"a minute; try again in {_seconds(wait)} s.",
                detail=f"channel limit {self._channels.limit}/min",
            )
        if self._daily.exhausted():
            log.warning("daily answer limit of %d reached", self._daily.limit)
            raise RateLimited(
                f"codecite has answered its daily limit of {self._daily.limit:,} questions; "
                "it resets at 00:00 UTC.",
                detail=f"daily limit {self._daily.limit}",
            )

    def stats(self) -> LimiterStats:
        with self._lock:
            now = self._clock()
            self._users.evict_idle(now)
            self._channels.evict_idle(now)
            return LimiterStats(
                users=len(self._users),
                channels=len(self._channels),
                answered_today=self._daily.used(),
                daily_limit=self._daily.limit,
            )


def _questions(n: int) -> str:
    return "1 question" if n == 1 else f"{n} questions"


def _seconds(wait: float) -> int:
    """Whole seconds, rounded up: "try again in 0 s" would be a lie."""
    return max(1, math.ceil(wait - 1e-9))
