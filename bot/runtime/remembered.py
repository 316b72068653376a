"""The last value a read returned, for when the store behind it is away for a while.

    states = Remembered("repository states")
    states.read(store.repo_states)   # the store's answer; the last good one while it fails

An answer needs a few small reads that change rarely (which repositories exist, at which
commit): with the database restarting, the last good value is a better answer than none.
`read` raises only when the store has never answered. One warning per outage says what
is served from memory, and one when the store answers again (`Outage`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

from bot.errors import StoreError

log = logging.getLogger(__name__)

T = TypeVar("T")


class Outage:
    """One warning when a store starts failing, one when it answers again."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._failing = False
        self._lock = threading.Lock()

    def failed(self, exc: StoreError, meanwhile: str) -> None:
        with self._lock:
            first, self._failing = not self._failing, True
        if first:
            log.warning(
                "%s: %s until the store answers again: %s",
                self.what,
                meanwhile,
                exc.detail or exc.user_message,
            )

    def answered(self) -> None:
        if not self._failing:  # the common case: no lock taken
            return
        with self._lock:
            was, self._failing = self._failing, False
        if was:
            log.warning("%s: the store answers again", self.what)


class Remembered(Generic[T]):
    """`read(fn)`: fn()'s value, remembered; the remembered one when fn raises StoreError."""

    def __init__(self, what: str) -> None:
        self._outage = Outage(what)
        self._value: tuple[T] | None = None

    def read(self, fn: Callable[[], T]) -> T:
        try:
            value = fn()
        except StoreError as exc:
            known = self._value
            if known is None:
                raise
            self._outage.failed(exc, "the last value read is used")
            return known[0]
        self._value = (value,)
        self._outage.answered()
        return value
