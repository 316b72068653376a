"""Application commands are registered only when they change, globally or per guild."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import discord
import pytest

from adapters.discord.client import CodeciteClient
from adapters.discord.sync import STATE_FILE
from bot.config import Settings
from bot.core import Core
from tests.servers.discord_fake import APP_ID
from tests.support.discord_core import build_core
from tests.support.discord_gateway import ALICE, GUILD_ID
from tests.support.discord_harness import Harness, run, running

GLOBAL_PUT = rf"/applications/{APP_ID}/commands"
GUILD_PUT = rf"/applications/{APP_ID}/guilds/{GUILD_ID}/commands"
NAMES = ["ask", "forget", "help", "map", "reindex", "repos", "status"]


def puts(h: Harness) -> dict[str, list[str]]:
    """Each PUT's target and the command names it carried."""
    return {
        ("guild" if "/guilds/" in r.path else "global"): sorted(c["name"] for c in r.body)
        for r in h.fake.calls("PUT", r"/applications/.*")
    }


def start(core: Core, **kwargs: Any) -> dict[str, list[str]]:
    async def scenario() -> dict[str, list[str]]:
        async with running(core, **kwargs) as h:
            return puts(h)

    return run(scenario())  # type: ignore[no-any-return]


def with_guilds(config_path: Path, guild_ids: str) -> Path:
    text = config_path.read_text(encoding="utf-8").replace(
        "[discord]\n", f"[discord]\nguild_ids = [{guild_ids}]\n"
    )
    path = config_path.with_name("guilds.toml")
    path.write_text(text, encoding="utf-8")
    return path


def test_a_second_start_makes_no_put(core: Core) -> None:
    assert start(core) == {"global": NAMES}
    assert (Settings().home / STATE_FILE).is_file()
    assert start(core) == {}


def test_changed_commands_are_synced_again(core: Core) -> None:
    assert start(core) == {"global": NAMES}

    def add_command(client: CodeciteClient) -> None:
        @client.tree.command(name="ping", description="Is codecite there?")
        async def ping(interaction: discord.Interaction[Any]) -> None:
            await interaction.response.send_message("pong")

    assert start(core, prepare=add_command) == {"global": sorted([*NAMES, "ping"])}
    assert start(core, prepare=add_command) == {}


def test_guild_ids_register_per_guild_and_clean_up_after_themselves(
    repos: dict[str, Any], config_path: Path
) -> None:
    core = build_core(repos, with_guilds(config_path, str(GUILD_ID)))
    try:
        assert start(core) == {"guild": NAMES, "global": []}
        assert start(core) == {}

        async def guild_command_works() -> None:
            async with running(core) as h:
                state = h.slash("help", guild_command=True)
                await h.fake.wait_for(lambda: state.messages)
                assert "/ask" in state.messages[0]["content"]

        run(guild_command_works())
    finally:
        core.close()
    core = build_core(repos, config_path)  # guild_ids removed again
    try:
        assert start(core) == {"global": NAMES, "guild": []}
    finally:
        core.close()


def test_a_guild_that_refuses_is_logged_and_retried_next_start(
    repos: dict[str, Any], config_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    missing = GUILD_ID + 99  # the bot is not in this guild: Discord answers 403
    core = build_core(repos, with_guilds(config_path, f"{GUILD_ID}, {missing}"))
    try:

        async def scenario() -> list[str]:
            async with running(core) as h:
                refused = [r.status for r in h.fake.requests if f"/guilds/{missing}/" in r.path]
                dm = h.open_dm(ALICE)
                h.say(dm, "where do we retry failed webhooks?", guild_id=None)
                await h.fake.wait_for(lambda: h.fake.bot_messages(dm))
                return [str(s) for s in refused]

        with caplog.at_level(logging.WARNING, logger="adapters.discord.sync"):
            assert run(scenario()) == ["403"]
        assert f"guild:{missing}" in caplog.text
        assert "applications.commands" in caplog.text

        async def again() -> int:
            async with running(core) as h:
                return len([r for r in h.fake.requests if f"/guilds/{missing}/" in r.path])

        assert run(again()) == 1  # not recorded as synced, so tried again
    finally:
        core.close()
