"""Counting injected faults and the ones the product survived, printed once per test module.

    faults = tally_fixture()          # at module level: a module-scoped `faults` fixture

    def test_x(faults):
        faults.inject("429")
        ...                           # the assertions that prove it was survived
        faults.survive("429")

At the end of the module the line "faults survived/injected: N/M (kind n/m, ...)"
is written past pytest's output capture, like test_faults_openai does.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest


@dataclass
class FaultTally:
    injected: Counter[str] = field(default_factory=Counter)
    survived: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def inject(self, kind: str, n: int = 1) -> None:
        with self.lock:
            self.injected[kind] += n

    def survive(self, kind: str, n: int = 1) -> None:
        with self.lock:
            self.survived[kind] += n

    def summary(self) -> str:
        kinds = ", ".join(f"{k} {self.survived[k]}/{n}" for k, n in sorted(self.injected.items()))
        total = sum(self.injected.values())
        return f"faults survived/injected: {sum(self.survived.values())}/{total} ({kinds})"


def tally_fixture() -> Callable[..., Any]:
    """A module-scoped `faults` fixture that prints the module's summary when it ends."""

    @pytest.fixture(scope="module")
    def faults(request: pytest.FixtureRequest) -> Iterator[FaultTally]:
        tally = FaultTally()
        yield tally
        config = request.config
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        capture = config.pluginmanager.get_plugin("capturemanager")
        if reporter is None or capture is None or not tally.injected:
            return
        module = request.module.__name__ if request.module else "?"
        with capture.global_and_fixture_disabled():  # print past pytest's output capture
            reporter.write_line(f"\n{module}: {tally.summary()}")

    return faults
