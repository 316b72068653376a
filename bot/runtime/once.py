"""A value built by its first reader, once, whichever thread reads first.

    answers = Once(build_composer)   # nothing imported or built yet
    answers.get().answer(question)   # built here, by the first question

The Core keeps its costly parts this way (retrieval, ingest), so a command that
needs neither (`codecite status`) never imports them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, ParamSpec, TypeVar

T = TypeVar("T")
R = TypeVar("R")
P = ParamSpec("P")


class Once(Generic[T]):
    def __init__(self, build: Callable[[], T]) -> None:
        self._build: Callable[[], T] | None = build
        self._value: T | None = None
        self._lock = threading.Lock()

    def get(self) -> T:
        value = self._value
        if value is not None:
            return value
        with self._lock:  # two first readers build it once
            if self._value is None:
                assert self._build is not None
                self._value = self._build()
                self._build = None  # what it captured is no longer needed
            return self._value

    def built(self) -> T | None:
        """The value if it has been built, else None (nothing is built)."""
        return self._value


def deferred(method: Callable[[], Callable[P, R]]) -> Callable[P, R]:
    """A function that calls what `method()` returns then, not before: a bound method of
    something built on first use (`Once`) can be handed out before it exists."""

    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        return method()(*args, **kwargs)

    return call
