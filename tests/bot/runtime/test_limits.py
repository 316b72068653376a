"""Rate and cost limits: exact windows and messages, no quota spent on refusals, bounded memory."""

from __future__ import annotations

import threading
from datetime import date

import pytest

from bot.config import FileConfig, LimitsConfig, Settings
from bot.core import CLI, Context, Core
from bot.errors import BotError, QuestionError, RateLimited
from bot.runtime.limits import Limiter


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Calendar:
    def __init__(self, day: date) -> None:
        self.day = day

    def __call__(self) -> date:
        return self.day


def slack(user: str = "U1", channel: str = "C1") -> Context:
    return Context(platform="slack", user=user, channel=channel, guild="T1")


def limiter(clock: Clock, calendar: Calendar | None = None, **limits: int) -> Limiter:
    return Limiter(
        LimitsConfig(**limits),
        clock=clock,
        today=calendar or Calendar(date(2024, 5, 1)),
    )


def refusal(lim: Limiter, ctx: Context) -> str:
    with pytest.raises(RateLimited) as info:
        lim.check(ctx)
    return info.value.user_message


def test_user_limit_is_a_sliding_minute_with_an_exact_wait():
    clock = Clock(0.0)
    lim = limiter(clock, per_user_per_minute=6, per_channel_per_minute=0)
    for t in (0, 5, 10, 15, 20, 25):
        clock.now = float(t)
        lim.check(slack())
    clock.now = 37.0
    assert refusal(lim, slack()) == (
        "You're asking faster than 6 questions a minute; try again in 23 s."
    )
    clock.now = 59.5
    assert refusal(lim, slack()).endswith("try again in 1 s.")  # rounded up, never "0 s"
    clock.now = 60.0  # the question at t=0 has left the window: one slot, not six
    lim.check(slack())
    assert refusal(lim, slack()).endswith("try again in 5 s.")  # next to leave: t=5
    lim.check(slack("U2"))  # other people are not affected


def test_channel_limit_counts_everyone_in_the_channel():
    clock = Clock()
    lim = limiter(clock, per_user_per_minute=6, per_channel_per_minute=3)
    for user in ("U1", "U2", "U3"):
        lim.check(slack(user))
    clock.now += 12.4
    assert refusal(lim, slack("U4")) == (
        "This channel is asking faster than 3 questions a minute; try again in 48 s."
    )
    lim.check(slack("U4", channel="C2"))  # another channel has its own window
    lim.check(Context(platform="discord", user="U4", channel="C1"))  # and another platform


def test_a_refused_question_uses_no_quota():
    clock = Clock()
    lim = limiter(clock, per_user_per_minute=2, per_channel_per_minute=2, daily_answers=3)
    lim.check(slack("U1"))
    lim.check(slack("U2"))
    for _ in range(5):  # the channel refuses U1: nothing may count against U1 or the day
        refusal(lim, slack("U1"))
    assert lim.stats().answered_today == 2
    lim.check(slack("U1", channel="C2"))  # U1 has used one of two, not six
    assert lim.stats().answered_today == 3


def test_daily_cap_across_users_resets_at_midnight_utc():
    clock, calendar = Clock(), Calendar(date(2024, 5, 1))
    lim = limiter(clock, calendar, per_user_per_minute=0, per_channel_per_minute=0, daily_answers=3)
    for n in range(3):
        lim.check(slack(f"U{n}", channel=f"C{n}"))
    message = refusal(lim, slack("U9", channel="C9"))
    assert message == (
        "codecite has answered its daily limit of 3 questions; it resets at 00:00 UTC."
    )
    clock.now += 3600
    refusal(lim, slack("U9", channel="C9"))
    calendar.day = date(2024, 5, 2)
    lim.check(slack("U9", channel="C9"))
    assert lim.stats().answered_today == 1


def test_large_limits_are_written_readably():
    lim = limiter(Clock(), per_user_per_minute=0, per_channel_per_minute=0, daily_answers=2000)
    for n in range(2000):
        lim.check(slack(f"U{n}"))
    assert "daily limit of 2,000 questions" in refusal(lim, slack())


def test_one_question_a_minute_is_singular():
    lim = limiter(Clock(), per_user_per_minute=1, per_channel_per_minute=0)
    lim.check(slack())
    assert refusal(lim, slack()).startswith("You're asking faster than 1 question a minute;")


def test_zero_disables_each_limit():
    lim = limiter(Clock(), per_user_per_minute=0, per_channel_per_minute=0, daily_answers=0)
    for _ in range(500):
        lim.check(slack())
    stats = lim.stats()
    assert (stats.users, stats.channels, stats.answered_today) == (0, 0, 500)


def test_the_terminal_is_exempt():
    lim = limiter(Clock(), per_user_per_minute=1, per_channel_per_minute=1, daily_answers=1)
    for _ in range(20):
        lim.check(CLI)
    assert lim.stats().answered_today == 0
    lim.check(slack())  # the one daily answer is still there for chat users


def test_a_dm_without_channel_is_limited_per_user_only():
    lim = limiter(Clock(), per_user_per_minute=2, per_channel_per_minute=1)
    dm = Context(platform="discord", user="U1", channel="", is_dm=True)
    lim.check(dm)
    lim.check(dm)
    assert refusal(lim, dm).startswith("You're asking faster than 2 questions")
    assert lim.stats().channels == 0


def test_refusals_are_bot_errors_with_one_line():
    lim = limiter(Clock(), per_user_per_minute=1)
    lim.check(slack())
    with pytest.raises(BotError) as info:
        lim.check(slack())
    assert "\n" not in info.value.user_message
    assert "U1" not in info.value.user_message and "C1" not in info.value.user_message


def test_idle_users_and_channels_are_forgotten():
    clock = Clock()
    lim = limiter(clock, per_user_per_minute=5, per_channel_per_minute=50)
    for n in range(1000):
        clock.now += 0.5  # 2 questions a second from ever-new people and channels
        lim.check(slack(f"U{n}", channel=f"C{n % 200}"))
    stats = lim.stats()
    # Only keys active in the last 60 s remain: 120 users, every channel was used recently.
    assert stats.users == 120
    assert stats.channels == 120
    clock.now += 61
    stats = lim.stats()
    assert (stats.users, stats.channels) == (0, 0)


def test_a_flood_of_new_ids_stays_within_max_keys():
    clock = Clock()
    lim = Limiter(
        LimitsConfig(per_user_per_minute=3, per_channel_per_minute=0, daily_answers=0),
        clock=clock,
        max_keys=50,
    )
    for n in range(5000):
        lim.check(slack(f"U{n}"))
    assert lim.stats().users == 50
    # the most recent keys are the ones kept: U4999 is still counted
    lim.check(slack("U4999"))
    lim.check(slack("U4999"))
    refusal(lim, slack("U4999"))


def test_concurrent_checks_never_overshoot_a_limit():
    lim = limiter(Clock(), per_user_per_minute=0, per_channel_per_minute=30, daily_answers=0)
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


def test_rejects_a_nonsense_key_cap():
    with pytest.raises(ValueError, match="max_keys"):
        Limiter(LimitsConfig(), max_keys=0)


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
