"""The ingest line: an ingest that must wait for another one of its repository says so first."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from bot.core import CLI, Core
from bot.store.locks import RepositoryBusy


@pytest.fixture
def held(core: Core) -> Iterator[threading.Event]:
    """The lock of `shop` held by another thread until the returned event is set."""
    taken, release = threading.Event(), threading.Event()

    def hold() -> None:
        with core.stores.locks.hold("shop"):
            taken.set()
            release.wait(60)

    thread = threading.Thread(target=hold)
    thread.start()
    assert taken.wait(10)
    yield release
    release.set()
    thread.join(10)


def test_a_terminal_reindex_hears_what_it_waits_for_then_runs(
    core: Core, held: threading.Event
) -> None:
    heard: list[str] = []
    report: list[str] = []
    worker = threading.Thread(
        target=lambda: report.append(
            core.reindex("shop", CLI, inline=True, on_wait=heard.append).result()
        )
    )
    worker.start()
    deadline = time.monotonic() + 10
    while not heard and time.monotonic() < deadline:
        time.sleep(0.01)
    assert heard == ["waiting for another ingest of shop to finish"]  # nobody logged a run
    assert not report  # it waits
    held.set()
    worker.join(60)
    assert report and report[0].startswith("• shop: ")


def test_a_scheduled_run_that_may_not_wait_is_skipped_without_a_word(
    core: Core, held: threading.Event
) -> None:
    [(name, outcome)] = core.reindex_repo("shop", trigger="schedule", wait=0.0).result()
    assert name == "shop" and isinstance(outcome, RepositoryBusy)
