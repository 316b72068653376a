"""A chat platform bot/ has never heard of, written against the Core's public API alone.

"echo" prefixes commands with `!`, decides admins by its own rule and keeps its
settings to itself. Everything it needs (help in its syntax, scope, limits,
feedback ids, a reindex on the ingest line) comes from the Core without a line
of bot/ naming it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from bot.commands import REINDEX, Syntax, parse
from bot.config import ChannelConfig, FileConfig, LimitsConfig, Settings
from bot.core import Context, Core
from bot.errors import BotError, RateLimited
from tests.support.jobs import running_jobs
from tests.support.shop import build_shop

ECHO = Syntax("!{}", "say `{ask}` or just ask", threads=False)


class EchoAdapter:
    """Two converters and a thin class between them (the slack-bolt shape)."""

    def __init__(self, core: Core, moderators: set[str]) -> None:
        self.core = core
        self.moderators = moderators

    def context(self, user: str, room: str) -> Context:
        return Context("echo", user, room, is_admin=user in self.moderators)

    def said(self, user: str, room: str, text: str) -> str:
        ctx = self.context(user, room)
        command = parse(text.removeprefix("!"))
        try:
            result = self.core.run_command(command, ctx, ECHO)
            if command.spec is REINDEX:
                return result.final_text(timeout=60)
            if result.answer is not None:
                return f"{result.answer.text} [vote:{result.answer.answer_id}]"
            return result.text
        except BotError as exc:
            return exc.user_message


@pytest.fixture
def echo(make_repo: Any) -> Iterator[EchoAdapter]:
    repo = make_repo("shop")
    build_shop(repo)
    config = FileConfig(
        channels={"lobby": ChannelConfig(repos=("shop",))},
        limits=LimitsConfig(per_user_per_minute=3),
    )
    core = Core.from_settings(Settings(), config)
    core.index_repo(str(repo.path), name="shop")
    with running_jobs(core):  # one process that also runs the scheduler's job runner
        yield EchoAdapter(core, moderators={"mod"})
    core.close()


def test_help_is_written_in_the_new_platforms_syntax(echo: EchoAdapter) -> None:
    text = echo.said("ann", "lobby", "!help")
    assert "• `!status`:" in text and "• `!map [repo]`:" in text
    assert "• Ask: say `!ask <question>` or just ask" in text
    assert "/codecite" not in text and "Follow-ups" not in text


def test_answers_carry_their_feedback_id_and_votes_land(echo: EchoAdapter) -> None:
    reply = echo.said("ann", "lobby", "!ask where do we retry failed webhooks?")
    assert "shop/webhooks.py:L" in reply
    answer_id = reply.rsplit("[vote:", 1)[1].rstrip("]")
    assert answer_id and echo.core.record_vote(answer_id, "bob", 1)
    assert [(row.platform, row.vote) for row in echo.core.votes()] == [("echo", 1)]


def test_the_platforms_own_admin_rule_decides_reindex(echo: EchoAdapter) -> None:
    assert echo.said("ann", "lobby", "!reindex") == "Only codecite admins can do that."
    assert echo.said("mod", "lobby", "!reindex").startswith("• shop: up to date")


def test_limits_and_scopes_apply_as_everywhere(echo: EchoAdapter) -> None:
    for _ in range(3):
        echo.core.ask("where do we retry?", echo.context("ann", "lobby"))
    with pytest.raises(RateLimited):
        echo.core.ask("where do we retry?", echo.context("ann", "lobby"))
    assert "shop" in echo.said("bob", "lobby", "!repos")
