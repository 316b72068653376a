"""Run the real CodeciteClient against the fake Discord API, with events injected.

`running`: the client logs in over REST (which also runs `setup_hook`: command sync),
receives a GUILD_CREATE, then whatever each test delivers; no gateway.
`connected`: the client logs in and connects to the fake gateway as in production.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import yarl
from discord.gateway import DiscordWebSocket
from discord.http import Route

from adapters.discord.client import CodeciteClient
from bot.core import Core
from tests.servers.discord_fake import TOKEN, DiscordFake, InteractionState
from tests.servers.discord_gateway_fake import GatewayFake
from tests.servers.discord_wire import dm_channel_payload, thread_payload
from tests.support import discord_gateway as gateway


@dataclass
class Harness:
    fake: DiscordFake
    client: CodeciteClient
    core: Core

    def say(self, channel_id: int, content: str, **kwargs: Any) -> dict[str, Any]:
        """Someone posts a message; Discord stores it and sends MESSAGE_CREATE."""
        payload = gateway.message_create(self.fake.next_id(), channel_id, content, **kwargs)
        self.fake.add_message(payload)
        self.client._connection.parse_message_create(payload)
        return payload

    def slash(
        self, name: str, options: dict[str, str] | None = None, **kwargs: Any
    ) -> InteractionState:
        kwargs.setdefault("channel", self.fake.channels[gateway.OPEN_CHANNEL])
        payload = gateway.slash_interaction(self.fake.next_id(), name, options, **kwargs)
        state = self.fake.add_interaction(payload)
        self.client._connection.parse_interaction_create(payload)
        return state

    def click(self, custom_id: str, message: dict[str, Any], **kwargs: Any) -> InteractionState:
        channel = self.fake.channels[int(message["channel_id"])]
        payload = gateway.button_interaction(
            self.fake.next_id(), custom_id, message, channel=channel, **kwargs
        )
        state = self.fake.add_interaction(payload)
        self.client._connection.parse_interaction_create(payload)
        return state

    def thread_created(self, thread_id: int) -> None:
        """THREAD_CREATE for a thread the fake knows (Discord sends it to the guild)."""
        self.client._connection.parse_thread_create(
            {**self.fake.channels[thread_id], "newly_created": True}
        )

    def user_thread(self, parent_id: int, owner: dict[str, Any]) -> int:
        """A thread someone else started, without the bot."""
        thread_id = self.fake.next_id()
        payload = thread_payload(
            thread_id, gateway.GUILD_ID, parent_id, owner_id=int(owner["id"]), name="chat"
        )
        self.fake.add_channel(payload)
        self.thread_created(thread_id)
        return thread_id

    def open_dm(self, user: dict[str, Any]) -> int:
        channel_id = self.fake.next_id()
        self.fake.add_channel(dm_channel_payload(channel_id, user))
        return channel_id

    async def settle(self) -> None:
        """Wait for every event handler the client started (no sleeps)."""
        while True:
            current = asyncio.current_task()
            pending = [
                t
                for t in asyncio.all_tasks()
                if t is not current
                and t.get_name().startswith(("discord", "CommandTree"))
                and not t.done()
            ]
            if not pending:
                return
            await asyncio.wait(pending, timeout=30)


@asynccontextmanager
async def served() -> AsyncIterator[DiscordFake]:
    """The fake Discord with the test guild's channels; outlives bot restarts inside it."""
    fake = DiscordFake()
    await fake.start()
    for channel in gateway.guild_channels():
        fake.add_channel(channel)
    fake.add_guild(gateway.GUILD_ID)
    try:
        yield fake
    finally:
        await fake.close()


@asynccontextmanager
async def running(
    core: Core,
    *,
    fake: DiscordFake | None = None,
    message_content: bool = False,
    guild: bool = True,
    prepare: Callable[[CodeciteClient], None] | None = None,
) -> AsyncIterator[Harness]:
    """A logged-in client; on a fresh fake unless `fake` is given (a restart of the bot)."""
    async with contextlib.AsyncExitStack() as stack:
        if fake is None:
            fake = await stack.enter_async_context(served())
        old_base, Route.BASE = Route.BASE, fake.base_url
        client = CodeciteClient(core, message_content=message_content)
        if prepare is not None:
            prepare(client)  # e.g. change the commands before login syncs them
        try:
            await client.login(TOKEN)
            if guild:
                client._connection.parse_guild_create(gateway.guild_create())
            harness = Harness(fake, client, core)
            yield harness
            await harness.settle()
        finally:
            await client.close()
            Route.BASE = old_base


async def _no_identify_wait(shard_id: int | None, *, initial: bool = False) -> None:
    """discord.py waits 5 s before a repeated IDENTIFY (a concurrency guard); no need here."""


@asynccontextmanager
async def connected(
    core: Core, rest: DiscordFake, gateway: GatewayFake, *, timeout: float = 15.0
) -> AsyncIterator[tuple[CodeciteClient, asyncio.Task[None]]]:
    """A client started like production (login over REST, then `connect` with reconnect on)
    once it has the guilds of `gateway`; yields it and its connection loop."""
    old_base, Route.BASE = Route.BASE, rest.base_url
    old_gateway = DiscordWebSocket.DEFAULT_GATEWAY
    DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway.url)
    client = CodeciteClient(core)
    client.before_identify_hook = _no_identify_wait  # type: ignore[method-assign]
    runner: asyncio.Task[None] | None = None
    try:
        await client.login(TOKEN)
        available = client.wait_for("guild_available", timeout=timeout)
        runner = asyncio.create_task(client.connect(reconnect=True))
        await available
        yield client, runner
    finally:
        await client.close()
        if runner is not None:  # it returns (or raises) once the client is closed
            await asyncio.wait({runner}, timeout=timeout)
        DiscordWebSocket.DEFAULT_GATEWAY = old_gateway
        Route.BASE = old_base


def run(coro: Any) -> Any:
    return asyncio.run(coro)
