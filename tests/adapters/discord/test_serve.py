"""`serve_discord`: token checks, REST base from settings, and the intents asked for."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import discord
import pytest
from discord.http import Route

from adapters.discord.client import make_intents
from adapters.discord.serve import serve_discord
from bot.core import Core
from bot.errors import ConfigError
from tests.servers.discord_fake import DiscordFake


@contextmanager
def fake_in_thread() -> Iterator[DiscordFake]:
    """The fake on its own loop, since serve_discord runs (and owns) another one."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    fake = DiscordFake()
    asyncio.run_coroutine_threadsafe(fake.start(), loop).result(timeout=10)
    try:
        yield fake
    finally:
        asyncio.run_coroutine_threadsafe(fake.close(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()


@pytest.fixture
def restore_route_base() -> Iterator[None]:
    old = Route.BASE
    yield
    Route.BASE = old


def test_serve_without_a_token_is_a_config_error(core: Core) -> None:
    with pytest.raises(ConfigError, match="DISCORD_TOKEN is not set"):
        serve_discord(core)


@pytest.mark.usefixtures("restore_route_base")
def test_a_rejected_token_stops_with_a_sentence(
    core: Core, monkeypatch: pytest.MonkeyPatch
) -> None:
    with fake_in_thread() as fake:
        monkeypatch.setenv("DISCORD_TOKEN", "not-the-token")
        monkeypatch.setenv("CODECITE_DISCORD_API_URL", fake.base_url)
        with pytest.raises(ConfigError, match="rejected DISCORD_TOKEN") as info:
            serve_discord(core)
        assert "not-the-token" not in str(info.value)
    assert [(r.method, r.path, r.status) for r in fake.requests] == [("GET", "/users/@me", 401)]
    assert fake.requests[0].authorization == "Bot not-the-token"


def test_intents_are_the_unprivileged_minimum() -> None:
    intents = make_intents(message_content=False)
    assert intents.guilds and intents.guild_messages and intents.dm_messages
    assert not (intents.message_content or intents.members or intents.presences)
    expected = discord.Intents(guilds=True, guild_messages=True, dm_messages=True)
    assert intents.value == expected.value
    assert make_intents(message_content=True).message_content


class _ClosedSocket:
    close_code = None


@pytest.mark.parametrize(("code", "words"), [(4004, "no longer accepts"), (4013, "intents")])
def test_a_fatal_gateway_close_stops_with_a_sentence(
    core: Core, monkeypatch: pytest.MonkeyPatch, code: int, words: str
) -> None:
    def closed(self: object, *args: object, **kwargs: object) -> None:
        raise discord.ConnectionClosed(_ClosedSocket(), shard_id=None, code=code)  # type: ignore[arg-type]

    monkeypatch.setenv("DISCORD_TOKEN", "token")
    monkeypatch.setattr("adapters.discord.serve.CodeciteClient.run", closed)
    with pytest.raises(ConfigError, match=words):
        serve_discord(core)


def test_other_gateway_closes_are_not_disguised(
    core: Core, monkeypatch: pytest.MonkeyPatch
) -> None:
    def closed(self: object, *args: object, **kwargs: object) -> None:
        raise discord.ConnectionClosed(_ClosedSocket(), shard_id=None, code=1011)  # type: ignore[arg-type]

    monkeypatch.setenv("DISCORD_TOKEN", "token")
    monkeypatch.setattr("adapters.discord.serve.CodeciteClient.run", closed)
    with pytest.raises(discord.ConnectionClosed):
        serve_discord(core)
