"""Rate limits hold across replicas: two bot processes, each with its own data directory, on
one PostgreSQL database count every question once, whichever replica it reaches; and when the
database is down, questions are answered uncounted rather than refused."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.config import FileConfig, LimitsConfig, Settings
from bot.core import Context, Core
from bot.errors import RateLimited
from bot.runtime.limits import Limiter
from bot.store import open_store
from tests.support.postgres import PostgresServer

QUESTION = "where do we retry failed jobs?"


def slack(user: str, channel: str = "C1") -> Context:
    return Context(platform="slack", user=user, channel=channel, guild="T1")


@pytest.fixture
def replicas(
    tmp_path: Path, database_url: str, make_repo: Callable[..., object], monkeypatch
) -> Callable[[LimitsConfig], tuple[Core, Core]]:
    """Two Cores (replica A and B) with data directories of their own on one database, each
    with the same repository indexed."""
    repo = make_repo("svc")
    repo.write("svc/retry.py", "def retry_failed_jobs():\n    return 3\n")  # type: ignore[attr-defined]
    repo.commit()  # type: ignore[attr-defined]

    def build(limits: LimitsConfig) -> tuple[Core, Core]:
        cores = []
        for name in ("a", "b"):
            monkeypatch.setenv("CODECITE_HOME", str(tmp_path / f"home-{name}"))
            monkeypatch.setenv("CODECITE_DATABASE_URL", database_url)
            core = Core.from_settings(Settings(), FileConfig(limits=limits))
            core.index_repo(str(repo.path), name="svc")  # type: ignore[attr-defined]
            cores.append(core)
        assert cores[0].stores is not cores[1].stores
        return cores[0], cores[1]

    return build


def refused(core: Core, ctx: Context) -> str:
    with pytest.raises(RateLimited) as info:
        core.ask(QUESTION, ctx)
    return info.value.user_message


def test_a_user_limit_of_two_holds_across_two_replicas(replicas) -> None:
    a, b = replicas(LimitsConfig(per_user_per_minute=2, per_channel_per_minute=0, daily_answers=0))
    assert a.ask(QUESTION, slack("U1")).citations
    assert b.ask(QUESTION, slack("U1")).citations
    for replica in (a, b):  # the third question is refused by either replica
        assert refused(replica, slack("U1")).startswith(
            "You're asking faster than 2 questions a minute; try again in "
        )
    assert b.ask(QUESTION, slack("U2")).citations  # someone else still may ask
    assert not (Path(a.settings.home) / "limits.sqlite").exists()  # counted in the database


def test_the_daily_cap_holds_across_two_replicas(replicas) -> None:
    a, b = replicas(LimitsConfig(per_user_per_minute=0, per_channel_per_minute=0, daily_answers=3))
    a.ask(QUESTION, slack("U1", "C1"))
    b.ask(QUESTION, slack("U2", "C2"))
    a.ask(QUESTION, slack("U3", "C3"))
    expected = "codecite has answered its daily limit of 3 questions; it resets at 00:00 UTC."
    assert refused(b, slack("U4", "C4")) == expected
    assert refused(a, slack("U5", "C5")) == expected


def test_a_database_outage_lets_questions_through_and_counting_resumes(
    postgres: PostgresServer, database_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    stores = open_store(tmp_path / "home", database_url=database_url)
    limiter = Limiter(LimitsConfig(per_user_per_minute=1), lambda: stores.quota, retry_after=0.5)
    try:
        limiter.check(slack("U1"))
        postgres.stop("immediate")
        try:
            with caplog.at_level(logging.WARNING, logger="bot.runtime.limits"):
                limiter.check(slack("U1"))  # would be refused; the store is down: let through
                started = time.monotonic()
                for _ in range(20):  # the next ones are let through without waiting for it
                    limiter.check(slack("U1"))
                meanwhile = time.monotonic() - started
        finally:
            postgres.start()
        time.sleep(0.5)  # past retry_after: the store is tried again
        with caplog.at_level(logging.WARNING), pytest.raises(RateLimited):
            limiter.check(slack("U1"))  # the database's count is there again
    finally:
        stores.close()
    warned = [r.getMessage() for r in caplog.records if r.name == "bot.runtime.limits"]
    assert warned[0].startswith("rate limits are not counted (answering anyway)")
    assert warned[1:] == ["rate limits are counted again"]
    assert meanwhile < 1.0
