"""Claim an incoming event once, across threads and processes sharing the data directory.

Chat platforms deliver one user action several times: Slack retries events it
thinks were not acknowledged, sends both `app_mention` and `message` for one
mention, and several bot processes may receive the same event. Whoever claims
an event's keys first answers it; everyone else drops it.

The claims themselves are a part of the storage seam (`bot.store.base.EventClaims`,
`stores.claims`; in SQLite `CODECITE_HOME/events.sqlite`, see `bot.store.claims`):
all keys of one event or none, between processes too. Here live how long a platform
may deliver an event again, and the process's own claims: every claim is made in
memory first, so a process never answers one event twice, even while the shared store
cannot be reached (then its own claims decide: one reply per event per process, never
one per retry; one warning says so, and one when the store answers again).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path

from bot.errors import BotError
from bot.store.base import EventClaims
from bot.store.claims import FILENAME, SqliteClaims

log = logging.getLogger(__name__)

DEFAULT_TTL_SECONDS = 24 * 3600.0  # Slack stops retrying after about an hour
PROCESS_CLAIMS = 50_000  # events this process remembers claiming (oldest forgotten first)


class ProcessClaims:
    """Claims made by this process, in memory, bounded; all keys of a claim or none."""

    def __init__(self, *, size: int = PROCESS_CLAIMS, clock: Callable[[], float] = time.monotonic):
        self._size = size
        self._clock = clock
        self._expiry: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def claim(self, keys: Sequence[str], ttl: float) -> bool:
        now = self._clock()
        with self._lock:
            if any(self._expiry.get(key, 0.0) > now for key in keys):
                return False
            for key in keys:
                self._expiry[key] = now + ttl
                self._expiry.move_to_end(key)
            while len(self._expiry) > self._size:
                self._expiry.popitem(last=False)
            return True


class EventDedupe:
    """`claim(*keys)` is True for exactly one caller per key until the claim expires."""

    def __init__(
        self,
        claims: EventClaims | Path,
        *,
        ttl_seconds: float = DEFAULT_TTL_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if ttl_seconds <= 0:
            raise ValueError("ttl_seconds must be positive")
        self._ttl = ttl_seconds
        self._owned = isinstance(claims, Path)  # opened here: closed here
        self._claims = SqliteClaims(claims, clock=clock) if isinstance(claims, Path) else claims
        self._process = ProcessClaims(clock=clock)
        self._failing = False  # the shared store is away (warned once)

    @classmethod
    def in_home(cls, home: Path, *, ttl_seconds: float = DEFAULT_TTL_SECONDS) -> EventDedupe:
        return cls(home / FILENAME, ttl_seconds=ttl_seconds)

    def claim(self, *keys: str, owner: str = "") -> bool:
        """Claim every key, or none: False when any of them is already claimed and unexpired
        (by this process, or by any process the shared store knows of). Never raises."""
        wanted = [key for key in keys if key]
        if not self._process.claim(wanted, self._ttl):
            return False  # this process has it already: a retry, or the same message again
        try:
            won = self._claims.claim(*wanted, ttl=self._ttl, owner=owner)
        except BotError as exc:
            if not self._failing:
                self._failing = True
                log.warning(
                    "event claims are kept in this process (one answer per event here) until "
                    "the shared store answers again: %s",
                    exc.detail or exc.user_message,
                )
            return True
        if self._failing:
            self._failing = False
            log.warning("event claims are shared again")
        return won

    def close(self) -> None:
        """Close claims opened here; claims handed in (`stores.claims`) belong to their owner."""
        if self._owned:
            self._claims.close()
