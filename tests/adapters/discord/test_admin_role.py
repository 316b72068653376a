"""`discord.admin_role` is a role id, honoured only in the servers of `discord.guild_ids`.

Through real discord.py against the fake Discord: a member of another server
who holds a role *named* like the admin role, or whose payload claims the admin
role's id, cannot reindex; a member of the configured server with the role id
can, by slash command and by mention. Role names in the config are refused.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adapters.discord.context import Admins
from adapters.discord.settings import discord_config, parse_discord_config
from adapters.sections import PLATFORM_SECTIONS
from bot.config import load_file_config
from bot.core import Context, Core
from bot.errors import ConfigError, PermissionDenied
from tests.servers.discord_wire import text_channel_payload
from tests.support.discord_core import build_core
from tests.support.discord_gateway import (
    ADMIN_ROLE_ID,
    ALICE,
    BOB,
    GUILD_ID,
    MEMBER_ROLE_ID,
    OPEN_CHANNEL,
    bot_user,
    guild_create,
    mention,
    role_payload,
)
from tests.support.discord_harness import Harness, run, running
from tests.support.jobs import running_jobs

OTHER_GUILD = 1_300_000_000_000_000_500
LOOKALIKE_ROLE = 1_300_000_000_000_000_501  # named "codecite-admins" in the other server
OTHER_CHANNEL = 1_300_000_000_000_000_510
REFUSED = "Only codecite admins can do that."
DONE = "• demo: up to date at "


def other_guild() -> dict[str, Any]:
    """A server someone else owns, where the bot was also invited."""
    return {
        **guild_create(),
        "id": str(OTHER_GUILD),
        "name": "elsewhere",
        "owner_id": str(ALICE["id"]),
        "roles": [
            role_payload(OTHER_GUILD, "@everyone", 0),
            role_payload(LOOKALIKE_ROLE, "codecite-admins", 1),
        ],
        "channels": [text_channel_payload(OTHER_CHANNEL, OTHER_GUILD, "general")],
    }


def read_section(path: Path) -> dict[str, Any]:
    """`[discord]` as the core keeps it for the adapter (unparsed)."""
    return load_file_config(path, PLATFORM_SECTIONS).platform_section("discord")


def config(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "admin.toml"
    path.write_text(body, encoding="utf-8")
    return path


@pytest.fixture
def guild_core(repos: dict[str, Any], tmp_path: Path) -> Iterator[Core]:
    path = config(
        tmp_path,
        f'admins = ["{BOB["id"]}"]\n'
        f"[discord]\nguild_ids = [{GUILD_ID}]\nadmin_role = {ADMIN_ROLE_ID}\n",
    )
    core = build_core(repos, path)
    with running_jobs(core):  # the scheduler's runner, here in the same process
        yield core
    core.close()


async def reply_to_slash(h: Harness, **kwargs: Any) -> str:
    """With guild_ids, the commands are registered in those servers only (guild commands)."""
    kwargs.setdefault("guild_command", bool(discord_config(h.core).guild_ids))
    state = h.slash("reindex", {"repo": "demo"}, **kwargs)
    await h.fake.wait_for(lambda: state.messages)
    await h.settle()
    return str(state.messages[-1]["content"])


async def reply_to_mention(h: Harness, channel: int, **kwargs: Any) -> str:
    before = len(h.fake.bot_messages(channel))
    h.say(channel, mention("reindex demo"), mentions=[bot_user()], **kwargs)
    await h.fake.wait_for(lambda: len(h.fake.bot_messages(channel)) > before)
    await h.settle()
    return str(h.fake.bot_messages(channel)[-1]["content"])


def recorded_contexts(core: Core, monkeypatch: pytest.MonkeyPatch) -> list[Context]:
    seen: list[Context] = []
    real = core.run_command

    def run_command(line: Any, ctx: Context, *args: Any) -> Any:
        seen.append(ctx)
        return real(line, ctx, *args)

    monkeypatch.setattr(core, "run_command", run_command)
    return seen


def test_only_the_role_id_in_a_configured_server_grants_reindex(
    guild_core: Core, monkeypatch: pytest.MonkeyPatch
) -> None:
    carol = {**ALICE, "id": "1300000000000000102", "username": "carol", "global_name": "carol"}
    contexts = recorded_contexts(guild_core, monkeypatch)
    outcomes: dict[str, str] = {}

    async def scenario() -> None:
        async with running(guild_core) as h:
            h.client._connection.parse_guild_create(other_guild())
            h.fake.add_channel(text_channel_payload(OTHER_CHANNEL, OTHER_GUILD, "general"))
            outcomes["role id, configured server, slash"] = await reply_to_slash(
                h, user=carol, roles=[ADMIN_ROLE_ID]
            )
            outcomes["role id, configured server, mention"] = await reply_to_mention(
                h, OPEN_CHANNEL, author=carol, roles=[ADMIN_ROLE_ID]
            )
            outcomes["other role, configured server"] = await reply_to_slash(
                h, user=carol, roles=[MEMBER_ROLE_ID]
            )
            # The commands exist only in guild_ids; elsewhere a mention is the way in.
            outcomes["lookalike name, other server"] = await reply_to_mention(
                h, OTHER_CHANNEL, author=carol, roles=[LOOKALIKE_ROLE], guild_id=OTHER_GUILD
            )
            outcomes["claimed role id, other server"] = await reply_to_mention(
                h, OTHER_CHANNEL, author=carol, roles=[ADMIN_ROLE_ID], guild_id=OTHER_GUILD
            )
            outcomes["listed admin, other server"] = await reply_to_mention(
                h, OTHER_CHANNEL, author=BOB, guild_id=OTHER_GUILD
            )

    run(scenario())
    granted = {name for name, text in outcomes.items() if text.startswith(DONE)}
    refused = {name for name, text in outcomes.items() if text.startswith(REFUSED)}
    assert granted == {
        "role id, configured server, slash",
        "role id, configured server, mention",
        "listed admin, other server",  # `admins` are user ids: they count everywhere
    }
    assert refused == set(outcomes) - granted
    # What the adapter hands the core: its decision, one context per command, in order.
    assert [ctx.is_admin for ctx in contexts] == [name in granted for name in outcomes]


def test_the_adapter_honours_the_role_only_in_configured_servers(guild_core: Core) -> None:
    admins = Admins(guild_core)
    role = str(ADMIN_ROLE_ID)
    assert admins("1", str(GUILD_ID), (role,))
    assert not admins("1", str(OTHER_GUILD), (role,))
    assert not admins("1", "", (role,))  # a DM: no server, no role
    assert not admins("1", str(GUILD_ID), ("x",))
    assert not admins("1", str(GUILD_ID), (str(LOOKALIKE_ROLE),))
    assert admins(str(BOB["id"]), "", ())  # listed in `admins`: everywhere
    # The core trusts the flag alone: without it nobody reindexes, admin id or not.
    with pytest.raises(PermissionDenied):
        guild_core.reindex("demo", Context("discord", str(BOB["id"]), "2", str(GUILD_ID)))


def test_without_guild_ids_no_role_grants_anything_and_the_start_says_so(
    core: Core, caplog: pytest.LogCaptureFixture
) -> None:
    """The shared fixture sets admin_role but no guild_ids."""
    assert discord_config(core).admin_role == str(ADMIN_ROLE_ID)
    assert not discord_config(core).guild_ids

    async def scenario() -> str:
        async with running(core) as h:
            return await reply_to_slash(h, user=BOB, roles=[ADMIN_ROLE_ID])

    with caplog.at_level(logging.WARNING, logger="adapters.discord.client"):
        text = run(scenario())
    assert text.startswith(REFUSED)
    warnings = [r.getMessage() for r in caplog.records if r.name == "adapters.discord.client"]
    assert any("guild_ids is empty" in w and "admins" in w for w in warnings)


@pytest.mark.parametrize("value", ['"codecite-admins"', '"@admins"', '"12ab"', '"1234 5678"'])
def test_a_role_name_is_a_one_line_config_error(tmp_path: Path, value: str) -> None:
    path = config(tmp_path, f"[discord]\nguild_ids = [{GUILD_ID}]\nadmin_role = {value}\n")
    with pytest.raises(ConfigError) as err:
        parse_discord_config(read_section(path), str(path))
    message = str(err.value)
    assert "\n" not in message and "discord.admin_role" in message and "role id" in message


@pytest.mark.parametrize(
    "value", [f'"{ADMIN_ROLE_ID}"', str(ADMIN_ROLE_ID), f'" {ADMIN_ROLE_ID} "']
)
def test_a_role_id_is_accepted_as_a_string_or_a_number(tmp_path: Path, value: str) -> None:
    path = config(tmp_path, f"[discord]\nguild_ids = [{GUILD_ID}]\nadmin_role = {value}\n")
    assert parse_discord_config(read_section(path)).admin_role == str(ADMIN_ROLE_ID)
