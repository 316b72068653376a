"""Rate and cost limits: exact windows and messages, no quota spent on refusals, counts kept
by the real SQLite store, and answers that keep flowing when that store fails."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.config import FileConfig, LimitsConfig, Settings
from bot.core import CLI, Context, Core
from bot.errors import BotError, QuestionError, RateLimited
from bot.runtime.limits import Limiter
from bot.store import StoreSet, open_store
from bot.store.quota import ProcessQuota

MIDNIGHT = datetime(2024, 5, 2, tzinfo=UTC).timestamp()


class Clock:
    def __init__(self, now: float = MIDNIGHT - 43_200) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[StoreSet]:
    opened = open_store(tmp_path / "home")
    yield opened
    opened.close()


def slack(user: str = "U1", channel: str = "C1") -> Context:
    return Context(platform="slack", user=user, channel=channel, guild="T1")


def limiter(stores: StoreSet, clock: Clock, **limits: int) -> Limiter:
    return Limiter(LimitsConfig(**limits), lambda: stores.quota, clock=clock)


def refusal(lim: Limiter, ctx: Context) -> str:
    with pytest.raises(RateLimited) as info:
        lim.check(ctx)
    return info.value.user_message


def test_user_limit_is_a_sliding_minute_with_an_exact_wait(stores: StoreSet) -> None:
    clock = Clock()
    t0 = clock.now
    lim = limiter(stores, clock, per_user_per_minute=6, per_channel_per_minute=0)
    for t in (0, 5, 10, 15, 20, 25):
        clock.now = t0 + t
        lim.check(slack())
    clock.now = t0 + 37
    assert refusal(lim, slack()) == (
        "You're asking faster than 6 questions a minute; try again in 23 s."
    )
    clock.now = t0 + 59.5
    assert refusal(lim, slack()).endswith("try again in 1 s.")  # rounded up, never "0 s"
    clock.now = t0 + 60  # the question at t=0 has left the window: one slot, not six
    lim.check(slack())
    assert refusal(lim, slack()).endswith("try again in 5 s.")  # next to leave: t=5
    lim.check(slack("U2"))  # other people are not affected


def test_channel_limit_counts_everyone_in_the_channel(stores: StoreSet) -> None:
    clock = Clock()
    lim = limiter(stores, clock, per_user_per_minute=6, per_channel_per_minute=3)
    for user in ("U1", "U2", "U3"):
        lim.check(slack(user))
    clock.now += 12.4
    assert refusal(lim, slack("U4")) == (
        "This channel is asking faster than 3 questions a minute; try again in 48 s."
    )
    lim.check(slack("U4", channel="C2"))  # another channel has its own window
    lim.check(Context(platform="discord", user="U4", channel="C1"))  # and another platform


def test_a_refused_question_uses_no_quota(stores: StoreSet) -> None:
    lim = limiter(stores, Clock(), per_user_per_minute=2, per_channel_per_minute=2, daily_answers=3)
    lim.check(slack("U1"))
    lim.check(slack("U2"))
    for _ in range(5):  # the channel refuses U1: nothing may count against U1 or the day
        refusal(lim, slack("U1"))
    assert lim.stats().answered_today == 2
    lim.check(slack("U1", channel="C2"))  # U1 has used one of two, not six
    assert lim.stats().answered_today == 3


def test_daily_cap_across_users_resets_at_midnight_utc(stores: StoreSet) -> None:
    clock = Clock(MIDNIGHT - 3600)
    lim = limiter(stores, clock, per_user_per_minute=0, per_channel_per_minute=0, daily_answers=3)
    for n in range(3):
        lim.check(slack(f"U{n}", channel=f"C{n}"))
    message = refusal(lim, slack("U9", channel="C9"))
    assert message == (
        "codecite has answered its daily limit of 3 questions; it resets at 00:00 UTC."
    )
    clock.now = MIDNIGHT - 0.001
    refusal(lim, slack("U9", channel="C9"))
    clock.now = MIDNIGHT  # 00:00 UTC
    lim.check(slack("U9", channel="C9"))
    assert lim.stats().answered_today == 1 and lim.stats().daily_limit == 3


def test_large_limits_are_written_readably(stores: StoreSet) -> None:
    lim = limiter(
        stores, Clock(), per_user_per_minute=0, per_channel_per_minute=0, daily_answers=2000
    )
    for n in range(2000):
        lim.check(slack(f"U{n}"))
    assert "daily limit of 2,000 questions" in refusal(lim, slack())


def test_one_question_a_minute_is_singular(stores: StoreSet) -> None:
    lim = limiter(stores, Clock(), per_user_per_minute=1, per_channel_per_minute=0)
    lim.check(slack())
    assert refusal(lim, slack()).startswith("You're asking faster than 1 question a minute;")


def test_zero_disables_each_limit(stores: StoreSet) -> None:
    lim = limiter(stores, Clock(), per_user_per_minute=0, per_channel_per_minute=0, daily_answers=0)
    for _ in range(500):
        lim.check(slack())
    stats = lim.stats()
    assert (stats.users, stats.channels, stats.answered_today) == (0, 0, 500)


def test_the_terminal_is_exempt(stores: StoreSet, tmp_path: Path) -> None:
    lim = limiter(stores, Clock(), per_user_per_minute=1, per_channel_per_minute=1, daily_answers=1)
    for _ in range(20):
        lim.check(CLI)
    assert not (tmp_path / "home" / "limits.sqlite").exists()  # not even opened
    assert lim.stats().answered_today == 0
    lim.check(slack())  # the one daily answer is still there for chat users


def test_a_dm_without_channel_is_limited_per_user_only(stores: StoreSet) -> None:
    lim = limiter(stores, Clock(), per_user_per_minute=2, per_channel_per_minute=1)
    dm = Context(platform="discord", user="U1", channel="", is_dm=True)
    lim.check(dm)
    lim.check(dm)
    assert refusal(lim, dm).startswith("You're asking faster than 2 questions")
    assert lim.stats().channels == 0


def test_refusals_are_bot_errors_with_one_line(stores: StoreSet) -> None:
    lim = limiter(stores, Clock(), per_user_per_minute=1)
    lim.check(slack())
    with pytest.raises(BotError) as info:
        lim.check(slack())
    assert "\n" not in info.value.user_message
    assert "U1" not in info.value.user_message and "C1" not in info.value.user_message


def test_idle_users_and_channels_are_forgotten(stores: StoreSet) -> None:
    clock = Clock()
    lim = limiter(stores, clock, per_user_per_minute=5, per_channel_per_minute=50)
    for n in range(1000):
        clock.now += 0.5  # 2 questions a second from ever-new people and channels
        lim.check(slack(f"U{n}", channel=f"C{n % 200}"))
    stats = lim.stats()
    # Only keys active in the last 60 s count: 120 users, every channel was used recently.
    assert stats.users == 120
    assert stats.channels == 120
    clock.now += 61
    stats = lim.stats()
    assert (stats.users, stats.channels) == (0, 0)


def test_two_limiters_on_one_store_share_the_limits(tmp_path: Path) -> None:
    first, second = open_store(tmp_path / "home"), open_store(tmp_path / "home")
    try:
        clock = Clock()
        one = limiter(first, clock, per_user_per_minute=2)
        two = limiter(second, clock, per_user_per_minute=2)
        one.check(slack())
        two.check(slack())
        assert refusal(one, slack()).startswith("You're asking faster than 2 questions")
        assert refusal(two, slack()).startswith("You're asking faster than 2 questions")
    finally:
        first.close()
        second.close()


def test_concurrent_checks_never_overshoot_a_limit(stores: StoreSet) -> None:
    lim = limiter(
        stores, Clock(), per_user_per_minute=0, per_channel_per_minute=30, daily_answers=0
    )
    threads = 8
    start = threading.Barrier(threads)
    accepted: list[int] = []
    lock = threading.Lock()

    def hammer(worker: int) -> None:
        start.wait()
        ok = 0
        for n in range(50):
            try:
                lim.check(slack(f"U{worker}-{n}"))
                ok += 1
            except RateLimited:
                pass
        with lock:
            accepted.append(ok)

    pool = [threading.Thread(target=hammer, args=(w,)) for w in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert sum(accepted) == 30
    assert lim.stats().answered_today == 30


def test_a_failing_store_lets_questions_through_with_one_warning_per_outage(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    current = [open_store(tmp_path / "home")]
    lim = Limiter(
        LimitsConfig(per_user_per_minute=1),
        lambda: current[0].quota,
        clock=Clock(),
        retry_after=0,  # try the store at every question
    )
    lim.check(slack())
    current[0].close()  # every part now fails with StoreError
    with caplog.at_level(logging.INFO, logger="bot.runtime.limits"):
        for _ in range(5):
            lim.check(slack())  # answered, uncounted: the bot does not go silent
        current[0] = open_store(tmp_path / "home")
        try:
            assert refusal(lim, slack()).startswith("You're asking faster than 1 question")
            current[0].close()
            lim.check(slack())  # a second outage
        finally:
            current[0].close()
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 3, warned
    assert warned[0].startswith("rate limits are not counted (answering anyway)")
    assert warned[1] == "rate limits are counted again"
    assert warned[2].startswith("rate limits are not counted")


def test_a_failing_store_leaves_the_limits_counted_in_the_process(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The database away: one user still cannot flood the bot (issue 27)."""
    stores = open_store(tmp_path / "home")
    lim = Limiter(
        LimitsConfig(per_user_per_minute=2, per_channel_per_minute=3, daily_answers=0),
        lambda: stores.quota,
        clock=Clock(),
        retry_after=60,
        fallback=ProcessQuota(),
    )
    stores.close()  # every part now fails with StoreError
    with caplog.at_level(logging.WARNING, logger="bot.runtime.limits"):
        lim.check(slack("U1", "C1"))
        lim.check(slack("U1", "C1"))
        assert refusal(lim, slack("U1", "C1")).startswith("You're asking faster than 2 questions")
        lim.check(slack("U2", "C1"))
        assert refusal(lim, slack("U3", "C1")).startswith("This channel is asking faster")
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 1 and warned[0].startswith("rate limits are counted in this process")


def test_core_applies_the_limits_after_validation(make_repo):
    repo = make_repo("svc")
    repo.write("svc/retry.py", "def retry_failed_jobs():\n    return 3\n")
    repo.commit()
    limits = LimitsConfig(per_user_per_minute=2, per_channel_per_minute=0, daily_answers=0)
    core = Core.from_settings(Settings(), FileConfig(limits=limits))
    try:
        core.index_repo(str(repo.path), name="svc")
        asker = slack()
        with pytest.raises(QuestionError):
            core.ask("   ", asker)  # refused before the limiter: costs no quota
        core.ask("where do we retry failed jobs?", asker)
        assert core.run_command("ask where do we retry?", asker).answer is not None
        with pytest.raises(RateLimited) as info:
            core.ask("where do we retry failed jobs?", asker)
        assert info.value.user_message.startswith(
            "You're asking faster than 2 questions a minute; try again in "
        )
        with pytest.raises(QuestionError):
            core.ask("", asker)  # a bad question is still told what is wrong with it
        core.ask("where do we retry failed jobs?", slack("U2"))
        for _ in range(5):
            core.ask("where do we retry failed jobs?", CLI)
    finally:
        core.close()
