"""Claim an incoming event once, across threads and processes sharing the data directory.

Chat platforms deliver one user action several times: Slack retries events it
thinks were not acknowledged, sends both `app_mention` and `message` for one
mention, and several bot processes may receive the same event. Whoever claims
an event's keys first answers it; everyone else drops it.

The claims themselves are a part of the storage seam (`bot.store.base.EventClaims`,
`stores.claims`; in SQLite `CODECITE_HOME/events.sqlite`, see `bot.store.claims`):
all keys of one event or none, between processes too. Here lives only how long
a platform may deliver an event again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from bot.store.base import EventClaims
from bot.store.claims import FILENAME, SqliteClaims

DEFAULT_TTL_SECONDS = 24 * 3600.0  # Slack stops retrying after about an hour


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

    @classmethod
    def in_home(cls, home: Path, *, ttl_seconds: float = DEFAULT_TTL_SECONDS) -> EventDedupe:
        return cls(home / FILENAME, ttl_seconds=ttl_seconds)

    def claim(self, *keys: str, owner: str = "") -> bool:
        """Claim every key, or none: False when any of them is already claimed and unexpired."""
        return self._claims.claim(*keys, ttl=self._ttl, owner=owner)

    def close(self) -> None:
        """Close claims opened here; claims handed in (`stores.claims`) belong to their owner."""
        if self._owned:
            self._claims.close()
