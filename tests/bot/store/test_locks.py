"""Ingest locks through the contract (`stores.locks`): exclusive between processes and
between threads, a wait that ends in RepositoryBusy, `busy` that never waits."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from bot.store import StoreSet
from bot.store.locks import RepositoryBusy
from tests.support.stores import lock_holder


def test_a_lock_held_by_another_process_excludes_this_one(
    kind: str, home: Path, stores: StoreSet
) -> None:
    child = lock_holder(kind, home, "api")
    try:
        assert stores.locks.busy("api")
        assert not stores.locks.busy("web")  # one lock per repository
        with pytest.raises(RepositoryBusy) as raised, stores.locks.hold("api", wait=0):
            pytest.fail("held a lock another process holds")
        assert "being indexed right now" in raised.value.user_message
        with stores.locks.hold("web", wait=0):
            pass
    finally:
        child.kill()
        child.wait()
    with stores.locks.hold("api", wait=5):  # its process died: the lock is free
        assert stores.locks.busy("api")
    assert not stores.locks.busy("api")


def test_a_wait_ends_in_repository_busy_after_its_time(
    kind: str, home: Path, stores: StoreSet
) -> None:
    child = lock_holder(kind, home, "api")
    try:
        began = time.monotonic()
        with pytest.raises(RepositoryBusy), stores.locks.hold("api", wait=0.3):
            pytest.fail("held a lock another process holds")
        waited = time.monotonic() - began
    finally:
        child.kill()
        child.wait()
    assert waited >= 0.3


def test_a_waiting_holder_gets_the_lock_when_it_is_released(
    stores: StoreSet, other: StoreSet
) -> None:
    order: list[str] = []
    first_holds = threading.Event()
    release = threading.Event()

    def first() -> None:
        with stores.locks.hold("api"):
            order.append("first in")
            first_holds.set()
            release.wait(10)
            order.append("first out")

    thread = threading.Thread(target=first)
    thread.start()
    assert first_holds.wait(10)
    assert other.locks.busy("api")
    threading.Timer(0.2, release.set).start()
    with other.locks.hold("api", wait=10):  # waits for the first holder, then holds
        order.append("second in")
    thread.join()
    assert order == ["first in", "first out", "second in"]


def test_two_threads_of_one_process_exclude_each_other(stores: StoreSet) -> None:
    inside = 0
    most = 0
    guard = threading.Lock()

    def work() -> None:
        nonlocal inside, most
        for _ in range(20):
            with stores.locks.hold("api"):
                with guard:
                    inside += 1
                    most = max(most, inside)
                time.sleep(0.001)
                with guard:
                    inside -= 1

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most == 1


def test_busy_never_makes_the_holder_wait(stores: StoreSet) -> None:
    with stores.locks.hold("api", wait=0):
        assert all(stores.locks.busy("api") for _ in range(50))
        with pytest.raises(RepositoryBusy), stores.locks.hold("api", wait=0):
            pytest.fail("a second hold of a held lock")
