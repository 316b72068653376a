"""`forget` on Discord through real discord.py against the fake Discord: `/forget` and a
mention ask first with a red button whose custom_id carries the confirming line; the
click, or `forget <repo> yes`, forgets with the clicker's own rights and scope."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.core import CLI, Core
from tests.servers.discord_wire import EPHEMERAL
from tests.support.discord_core import build_core
from tests.support.discord_gateway import (
    ALICE,
    BOB,
    MAPPED_CHANNEL,
    OPEN_CHANNEL,
    bot_user,
    mention,
)
from tests.support.discord_harness import Harness, run, running

REFUSED = "Only codecite admins can do that."
DANGER = 4


@pytest.fixture
def core(repos: dict[str, Any], tmp_path: Path) -> Iterator[Core]:
    """Alice is an admin (listed by user id); Bob is not."""
    path = tmp_path / "forget.toml"
    path.write_text(
        f'admins = ["{ALICE["id"]}"]\n[channels."{MAPPED_CHANNEL}"]\nrepos = ["demo"]\n',
        encoding="utf-8",
    )
    core = build_core(repos, path)
    yield core
    core.close()


def indexed(core: Core) -> list[str]:
    return [s.name for s in core.index.repo_states()]


async def slash_reply(h: Harness, repo: str, **kwargs: Any) -> dict[str, Any]:
    state = h.slash("forget", {"repo": repo}, **kwargs)
    await h.fake.wait_for(lambda: state.messages, timeout=60)
    await h.settle()
    (message,) = state.messages
    assert message["flags"] & EPHEMERAL  # only the asker sees the question, or the refusal
    return message


async def click(h: Harness, message: dict[str, Any], user: dict[str, Any]) -> str:
    ((button,),) = [row["components"] for row in message["components"]]
    state = h.click(button["custom_id"], message, user=user)
    await h.fake.wait_for(lambda: state.messages, timeout=60)
    await h.settle()
    (reply,) = state.messages
    assert reply["flags"] & EPHEMERAL
    return str(reply["content"])


async def mention_reply(h: Harness, text: str, count: int = 1) -> dict[str, Any]:
    before = len(h.fake.bot_messages(OPEN_CHANNEL))
    h.say(OPEN_CHANNEL, mention(text), mentions=[bot_user()])
    await h.fake.wait_for(lambda: len(h.fake.bot_messages(OPEN_CHANNEL)) >= before + count, 60)
    await h.settle()
    return h.fake.bot_messages(OPEN_CHANNEL)[-1]


def test_slash_forget_asks_with_a_button_that_only_an_admin_can_use(core: Core) -> None:
    async def scenario() -> None:
        async with running(core) as h:
            forget = next(c for c in h.fake.commands["global"] if c["name"] == "forget")
            assert forget["description"].endswith("(admins only)")
            assert forget["options"][0]["name"] == "repo" and forget["options"][0]["required"]

            asked = await slash_reply(h, "billing")
            assert asked["content"].startswith("Forget billing? This removes its 1 file")
            assert asked["content"].endswith(
                "To confirm: the button below, or mention me with `forget billing yes`"
            )
            ((button,),) = [row["components"] for row in asked["components"]]
            assert button["custom_id"] == "codecite:confirm:forget billing yes"
            assert (button["style"], button["label"]) == (DANGER, "Forget billing")
            assert indexed(core) == ["billing", "demo"]

            assert (await click(h, asked, BOB)).startswith(REFUSED)
            assert indexed(core) == ["billing", "demo"]
            report = await click(h, asked, ALICE)
            assert report.startswith("Forgot billing: removed 1 file and 1 chunk from the index")
            assert indexed(core) == ["demo"]
            assert all(h.chunk.repo == "demo" for h in core.search("ledger batches", CLI))
            assert (await click(h, asked, ALICE)).startswith(
                "There is no repository named 'billing' here."
            )

    run(scenario())


def test_slash_forget_refuses_non_admins_and_repositories_outside_the_channel(
    core: Core,
) -> None:
    async def scenario() -> None:
        async with running(core) as h:
            refused = await slash_reply(h, "billing", user=BOB)
            assert refused["content"].startswith(REFUSED) and not refused["components"]
            mapped = h.fake.channels[MAPPED_CHANNEL]
            outside = await slash_reply(h, "billing", channel=mapped)
            assert outside["content"].startswith("There is no repository named 'billing' here.")
            assert indexed(core) == ["billing", "demo"]

    run(scenario())


def test_a_mention_asks_and_forget_yes_forgets(core: Core) -> None:
    async def scenario() -> None:
        async with running(core) as h:
            asked = await mention_reply(h, "forget demo")
            assert asked["content"].startswith("Forget demo? This removes")
            ((button,),) = [row["components"] for row in asked["components"]]
            assert button["custom_id"] == "codecite:confirm:forget demo yes"
            assert indexed(core) == ["billing", "demo"]
            done = await mention_reply(h, "forget demo yes")
            assert done["content"].startswith("Forgot demo: removed 1 file and 1 chunk")
            assert not done["components"] and indexed(core) == ["billing"]

    run(scenario())
