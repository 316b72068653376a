"""The rate limits' counts (`StoreSet.quota`), asserted through the contract only, against
SQLite and PostgreSQL: exact windows, the UTC day, nothing counted for a refusal, one limit
for every process on the store, and no more admitted than the limit under contention."""

from __future__ import annotations

import logging
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.runtime.limits import QuotaUsage, Refusal
from bot.store import StoreSet, open_store
from bot.store.quota import PRUNE_EVERY
from bot.store.sqlite import notices
from tests.support.damage import GARBAGE
from tests.support.stores import open_kind

NOON = datetime(2026, 12, 1, 12, tzinfo=UTC).timestamp()
MIDNIGHT = datetime(2026, 12, 2, tzinfo=UTC).timestamp()
WINDOW = 60.0


def take(
    stores: StoreSet,
    now: float,
    user: str = "slack:U1",
    channel: str | None = "slack:C1",
    *,
    per_user: int = 0,
    per_channel: int = 0,
    daily: int = 0,
) -> Refusal | None:
    return stores.quota.take(
        user,
        channel,
        per_user=per_user,
        per_channel=per_channel,
        daily=daily,
        window=WINDOW,
        now=now,
    )


def usage(stores: StoreSet, now: float) -> QuotaUsage:
    return stores.quota.usage(window=WINDOW, now=now)


def test_a_user_may_ask_n_in_any_window_and_is_told_the_exact_wait(stores: StoreSet) -> None:
    for t in (0, 10, 20):
        assert take(stores, NOON + t, per_user=3) is None
    assert take(stores, NOON + 30, per_user=3) == Refusal("user", 30.0)  # t=0 leaves at 60
    assert take(stores, NOON + 59.5, per_user=3) == Refusal("user", 0.5)
    assert take(stores, NOON + 60, per_user=3) is None  # one slot freed, not three
    assert take(stores, NOON + 61, per_user=3) == Refusal("user", 9.0)  # next: t=10
    assert take(stores, NOON + 61, "slack:U2", per_user=3) is None  # others are not affected
    assert take(stores, NOON + 61, "discord:U1", per_user=3) is None  # nor another platform


def test_a_channel_counts_everyone_in_it(stores: StoreSet) -> None:
    for user in ("U1", "U2", "U3"):
        assert take(stores, NOON, f"slack:{user}", per_user=5, per_channel=3) is None
    refused = take(stores, NOON + 12.5, "slack:U4", per_user=5, per_channel=3)
    assert refused == Refusal("channel", 47.5)
    assert take(stores, NOON + 12.5, "slack:U4", "slack:C2", per_user=5, per_channel=3) is None


def test_the_user_limit_is_named_before_the_channel_and_the_day(stores: StoreSet) -> None:
    limits = {"per_user": 1, "per_channel": 1, "daily": 1}
    assert take(stores, NOON, **limits) is None
    refused = take(stores, NOON + 1, **limits)
    assert refused is not None and refused.limit == "user"
    refused = take(stores, NOON + 1, "slack:U2", **limits)
    assert refused is not None and refused.limit == "channel"
    refused = take(stores, NOON + 1, "slack:U2", "slack:C2", **limits)
    assert refused is not None and refused.limit == "daily"


def test_the_daily_cap_counts_everyone_and_resets_at_midnight_utc(stores: StoreSet) -> None:
    for n in range(3):
        assert take(stores, MIDNIGHT - 100 + n, f"slack:U{n}", f"slack:C{n}", daily=3) is None
    assert take(stores, MIDNIGHT - 10, "slack:U9", daily=3) == Refusal("daily", 10.0)
    assert take(stores, MIDNIGHT - 0.25, "slack:U9", daily=3) == Refusal("daily", 0.25)
    assert usage(stores, MIDNIGHT - 1).answered_today == 3
    assert take(stores, MIDNIGHT, "slack:U9", daily=3) is None  # a new UTC day
    assert usage(stores, MIDNIGHT + 1).answered_today == 1
    assert usage(stores, MIDNIGHT - 1).answered_today == 3  # yesterday's count is kept


def test_a_refused_question_counts_against_nothing(stores: StoreSet) -> None:
    limits = {"per_user": 2, "per_channel": 2, "daily": 3}
    assert take(stores, NOON, "slack:U1", **limits) is None
    assert take(stores, NOON, "slack:U2", **limits) is None
    for _ in range(5):  # the channel refuses U1: nothing may count against U1 or the day
        refused = take(stores, NOON + 1, "slack:U1", **limits)
        assert refused is not None and refused.limit == "channel"
    assert usage(stores, NOON + 1).answered_today == 2
    assert take(stores, NOON + 2, "slack:U1", "slack:C2", **limits) is None  # 2 of 2, not 7
    refused = take(stores, NOON + 2, "slack:U1", "slack:C3", **limits)
    assert refused is not None and refused.limit == "user"
    assert usage(stores, NOON + 2).answered_today == 3


def test_a_limit_of_zero_is_off_and_the_day_still_counts(stores: StoreSet) -> None:
    for n in range(300):
        assert take(stores, NOON + n / 100) is None
    assert usage(stores, NOON + 3) == QuotaUsage(users=0, channels=0, answered_today=300)


def test_a_question_without_a_channel_meets_only_the_user_limit(stores: StoreSet) -> None:
    for _ in range(2):
        assert take(stores, NOON, channel=None, per_user=2, per_channel=1) is None
    refused = take(stores, NOON, channel=None, per_user=2, per_channel=1)
    assert refused is not None and refused.limit == "user"
    assert usage(stores, NOON) == QuotaUsage(users=1, channels=0, answered_today=2)


def test_usage_counts_the_keys_active_within_the_window(stores: StoreSet) -> None:
    for n in range(100):  # a new user every second, in one of 10 channels
        take(stores, NOON + n, f"slack:U{n}", f"slack:C{n % 10}", per_user=5, per_channel=50)
    assert usage(stores, NOON + 99) == QuotaUsage(users=60, channels=10, answered_today=100)
    assert usage(stores, NOON + 99 + WINDOW) == QuotaUsage(0, 0, 100)


def test_two_processes_share_one_limit(stores: StoreSet, other: StoreSet) -> None:
    assert take(stores, NOON, per_user=2, daily=3) is None
    assert take(other, NOON + 1, per_user=2, daily=3) is None
    assert take(stores, NOON + 2, per_user=2, daily=3) == Refusal("user", 58.0)
    assert take(other, NOON + 3, per_user=2, daily=3) == Refusal("user", 57.0)
    assert take(other, NOON + 3, "slack:U2", per_user=2, daily=3) is None
    refused = take(stores, NOON + 4, "slack:U3", per_user=2, daily=3)
    assert refused is not None and refused.limit == "daily"
    assert usage(other, NOON + 4).answered_today == 3


def test_concurrent_processes_never_admit_more_than_the_limit(kind: str, home: Path) -> None:
    limit, threads, tries = 20, 8, 10
    sets = [open_kind(kind, home) for _ in range(threads)]
    start = threading.Barrier(threads)
    admitted: list[int] = []
    lock = threading.Lock()

    def hammer(stores: StoreSet) -> None:
        start.wait()
        ok = sum(take(stores, NOON, per_user=limit, daily=0) is None for _ in range(tries))
        with lock:
            admitted.append(ok)

    try:
        workers = [threading.Thread(target=hammer, args=(s,)) for s in sets]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        assert len(admitted) == threads  # no worker died
        assert sum(admitted) == limit
        assert usage(sets[0], NOON).answered_today == limit
    finally:
        for stores in sets:
            stores.close()


def count_rows(kind: str, stores: StoreSet, home: Path) -> int:
    if kind == "sqlite":
        with sqlite3.connect(home / "limits.sqlite") as db:
            return int(db.execute("SELECT count(*) FROM quota").fetchone()[0])
    database = stores.database  # type: ignore[attr-defined]  # PostgresStores
    row = database.run(lambda conn: conn.execute("SELECT count(*) FROM quota").fetchone())
    return int(row[0])


def test_idle_windows_and_old_days_are_pruned(kind: str, stores: StoreSet, home: Path) -> None:
    day = 86_400.0
    for n in range(PRUNE_EVERY):  # many one-off askers on two days
        at = NOON - 5 * day + n if n % 2 else NOON - 4 * day + n
        take(stores, at, f"slack:U{n}", f"slack:C{n}", per_user=2, per_channel=2)
    assert count_rows(kind, stores, home) == 2 * PRUNE_EVERY + 2
    # the next prune (every PRUNE_EVERY takes) finds every window idle and both days old
    assert take(stores, NOON, per_user=2, per_channel=2) is None
    assert count_rows(kind, stores, home) == 3  # the asker's user, channel and today
    assert take(stores, NOON + 1, per_user=2, per_channel=2) is None
    assert take(stores, NOON + 2, per_user=2, per_channel=2) == Refusal("user", 58.0)


def test_a_damaged_file_is_set_aside_and_counting_starts_afresh(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    stores = open_store(tmp_path)
    assert take(stores, NOON, per_user=1) is None
    stores.close()
    (tmp_path / "limits.sqlite").write_bytes(GARBAGE)
    with caplog.at_level(logging.WARNING):
        reopened = open_store(tmp_path)
        try:
            assert take(reopened, NOON + 1, per_user=1) is None  # the old count is gone
            assert take(reopened, NOON + 2, per_user=1) == Refusal("user", 59.0)
        finally:
            reopened.close()
    [kept] = tmp_path.glob("limits.sqlite.damaged-*")
    assert kept.read_bytes() == GARBAGE
    [notice] = [n for n in notices([tmp_path]) if n.path.name == "limits.sqlite"]
    assert notice.sentence().startswith("The rate-limit store was damaged and has been started")
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warned.count(notice.sentence()) == 1
