"""The real CodeciteClient over a real gateway connection survives reconnects.

discord.py logs in against the fake REST API and connects (`Client.connect`,
reconnect on) to the fake gateway, which Discord's own URL is swapped for.
Mentions arrive as MESSAGE_CREATE over the websocket; answers are POSTed to
the REST fake. Faults: the connection is aborted without a close frame,
closed with a close code, Discord asks for a reconnect (op 7), the session
has expired so the RESUME is refused (op 9) and the client must IDENTIFY
again, and a mention is sent while the client is away (replayed on RESUME).
Not survivable, and checked as such: a token reset while connected (4004)
ends the connection loop with an error after one attempt. Every wait is on a
recorded event, with a timeout.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import aiohttp
import discord
import pytest

from adapters.discord.client import CodeciteClient, make_intents
from bot.config import FileConfig, Settings
from bot.core import Core
from tests.servers.discord_fake import TOKEN, DiscordFake
from tests.servers.discord_gateway_fake import RESUME_PATH, GatewayFake
from tests.support.discord_gateway import OPEN_CHANNEL, bot_user, guild_create, mention
from tests.support.discord_gateway import message_create as message_payload
from tests.support.discord_harness import Harness, connected, served
from tests.support.fault_tally import FaultTally, tally_fixture

HOOKS_PY = '''"""Webhook delivery."""


def retry_failed_webhooks(queue):
    """Retry every failed webhook with exponential backoff."""
    for hook in queue.failed():
        hook.deliver_with_backoff()
'''
QUESTION = "where do we retry failed webhooks?"
CITED = "src/hooks.py:L"
WAIT = 15.0  # seconds; generous on a shared machine, never reached when things work

faults = tally_fixture()


@pytest.fixture
def core(make_repo: Callable[..., Any]) -> Iterator[Core]:
    repo = make_repo("demo")
    repo.write("src/hooks.py", HOOKS_PY)
    repo.commit("hooks")
    core = Core.from_settings(Settings(), FileConfig())
    core.index_repo(str(repo.path), name="demo")
    yield core
    core.close()


@dataclass
class Online:
    rest: DiscordFake
    gateway: GatewayFake
    client: CodeciteClient
    core: Core
    runner: asyncio.Task[None]  # the client's connection loop

    def guild_available(self) -> Awaitable[Any]:
        """Registered now, resolved when the client has the test guild in its cache."""
        return self.client.wait_for("guild_available", timeout=WAIT)

    async def ask(self, text: str = QUESTION) -> dict[str, Any]:
        """Someone mentions the bot; Discord stores the message and dispatches it."""
        payload = self.post(text)
        await self.gateway.dispatch("MESSAGE_CREATE", payload)
        return payload

    def post(self, text: str = QUESTION) -> dict[str, Any]:
        payload = message_payload(
            self.rest.next_id(), OPEN_CHANNEL, mention(text), mentions=[bot_user()]
        )
        return self.rest.add_message(payload)

    def replies_to(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            m
            for m in self.rest.bot_messages(OPEN_CHANNEL)
            if m.get("message_reference", {}).get("message_id") == message["id"]
        ]

    async def answered(self, message: dict[str, Any]) -> dict[str, Any]:
        replies: list[dict[str, Any]] = await self.rest.wait_for(
            lambda: self.replies_to(message), WAIT
        )
        assert CITED in replies[0]["content"]
        return replies[0]

    async def reconnected(self, how: str) -> None:
        """Wait for the second established connection and check how it was made."""
        established = await self.gateway.wait_for(lambda: self.gateway.established()[1:], WAIT)
        assert established[0].how == how

    async def settle(self) -> None:
        await Harness(self.rest, self.client, self.core).settle()


@asynccontextmanager
async def online(core: Core) -> AsyncIterator[Online]:
    """A client started like production (login, then connect with reconnect on)."""
    async with served() as rest:
        gateway = GatewayFake(guilds=[guild_create()])
        await gateway.start()
        try:
            async with connected(core, rest, gateway, timeout=WAIT) as (client, runner):
                yield Online(rest, gateway, client, core, runner)
        finally:
            await gateway.close()


def run(scenario: Callable[[Online], Awaitable[None]], core: Core) -> None:
    """Run `scenario` on a connected client; afterwards it must still be connected and clean."""

    async def main() -> None:
        async with online(core) as bot:
            await scenario(bot)
            await bot.settle()
            assert not bot.runner.done(), "the connection loop ended under the test"
            assert bot.gateway.violations == []

    asyncio.run(main())


def test_a_mention_over_the_gateway_is_answered(core: Core) -> None:
    async def scenario(bot: Online) -> None:
        asked = await bot.ask()
        await bot.answered(asked)
        identify = bot.gateway.identifies
        assert len(identify) == 1 and bot.gateway.resumes == []
        assert identify[0]["intents"] == make_intents(message_content=False).value
        assert bot.gateway.payloads(1), "the client heartbeats"
        assert bot.gateway.connections[0].compressor is not None  # it asked for zlib-stream

    run(scenario, core)


@pytest.mark.parametrize("code", [None, 4000, 1000, 1001])
def test_a_lost_connection_is_resumed_and_the_next_mention_answered(
    core: Core, faults: FaultTally, code: int | None
) -> None:
    kind = "gateway dropped" if code is None else f"gateway closed {code}"

    async def scenario(bot: Online) -> None:
        await bot.answered(await bot.ask())
        faults.inject(kind)
        if code is None:
            await bot.gateway.drop()
        else:
            await bot.gateway.close_connection(code)
        await bot.reconnected("resume")
        first, resumed = bot.gateway.established()
        assert resumed.path == RESUME_PATH  # READY's resume_gateway_url, as Discord requires
        session = first.session
        assert session is not None and resumed.session is session
        # The client resumes from the last event it saw: nothing is missed or replayed.
        assert bot.gateway.resumes == [
            {"token": TOKEN, "session_id": session.id, "seq": session.seq}
        ]
        await bot.answered(await bot.ask("where is retry_failed_webhooks?"))
        assert len(bot.gateway.identifies) == 1
        faults.survive(kind)

    run(scenario, core)


def test_op_7_reconnect_is_resumed_and_the_next_mention_answered(
    core: Core, faults: FaultTally
) -> None:
    async def scenario(bot: Online) -> None:
        await bot.answered(await bot.ask())
        faults.inject("gateway op 7")
        await bot.gateway.request_reconnect()
        await bot.reconnected("resume")
        await bot.answered(await bot.ask("where is retry_failed_webhooks?"))
        assert len(bot.gateway.identifies) == 1
        faults.survive("gateway op 7")

    run(scenario, core)


def test_a_mention_sent_while_disconnected_is_replayed_on_resume_and_answered_once(
    core: Core, faults: FaultTally
) -> None:
    async def scenario(bot: Online) -> None:
        first = await bot.ask()
        await bot.answered(first)
        faults.inject("gateway dropped, event missed")
        await bot.gateway.drop()
        missed = await bot.ask("where is retry_failed_webhooks?")  # no live connection: backlog
        await bot.reconnected("resume")
        await bot.answered(missed)
        await bot.settle()
        assert len(bot.replies_to(first)) == 1  # events seen before the drop are not replayed
        assert len(bot.replies_to(missed)) == 1
        faults.survive("gateway dropped, event missed")

    run(scenario, core)


def test_an_expired_session_is_identified_afresh_and_the_next_mention_answered(
    core: Core, faults: FaultTally
) -> None:
    async def scenario(bot: Online) -> None:
        await bot.answered(await bot.ask())
        faults.inject("gateway session expired")
        bot.gateway.expire_sessions()
        available = bot.guild_available()  # a fresh READY refills the guild cache
        await bot.gateway.drop()
        await bot.reconnected("identify")
        await available
        assert len(bot.gateway.resumes) == 1  # it tried to resume first, as Discord advises
        assert bot.gateway.payloads(2)[1]["token"] == TOKEN
        await bot.answered(await bot.ask("where is retry_failed_webhooks?"))
        faults.survive("gateway session expired")

    run(scenario, core)


def test_a_token_reset_while_connected_stops_the_client_instead_of_retrying(core: Core) -> None:
    async def main() -> None:
        async with online(core) as bot:
            bot.gateway.token = "reset-in-the-developer-portal"
            await bot.gateway.drop()
            await asyncio.wait({bot.runner}, timeout=WAIT)
            error = bot.runner.exception()
            assert isinstance(error, discord.ConnectionClosed) and error.code == 4004
            assert len(bot.gateway.connections) == 2  # one RESUME refused, no reconnect storm
            assert bot.client.is_closed()
            assert [v.split(": ")[1] for v in bot.gateway.violations] == [
                "4004 authentication failed"
            ]

    asyncio.run(main())


# -- the fake gateway itself: what discord.py never sends, checked with a raw websocket ---------


def test_the_fake_gateway_refuses_what_discord_refuses() -> None:
    async def main() -> None:
        gateway = GatewayFake(guilds=[guild_create()])
        await gateway.start()
        try:
            async with aiohttp.ClientSession() as http:
                await _refusals(http, gateway.url)
                await _intents_filter(http, gateway)
        finally:
            await gateway.close()
        assert [v.split(": ")[1] for v in gateway.violations] == [
            "4012 invalid API version",
            "4003 not authenticated",
            "4004 authentication failed",
        ]

    asyncio.run(main())


async def _refusals(http: aiohttp.ClientSession, url: str) -> None:
    async with http.ws_connect(url + "?v=9&encoding=json") as ws:
        assert (await ws.receive()).data == 4012
    async with http.ws_connect(url + "?v=10&encoding=json") as ws:
        assert (await ws.receive_json())["op"] == 10  # HELLO, as plain text without compress
        await ws.send_json({"op": 3, "d": {"status": "online"}})  # before IDENTIFY
        assert (await ws.receive()).data == 4003
    async with http.ws_connect(url + "?v=10&encoding=json") as ws:
        await ws.receive_json()
        await ws.send_json({"op": 6, "d": {"token": TOKEN, "session_id": "gone", "seq": 3}})
        assert await ws.receive_json() == {"op": 9, "d": False}  # unknown session: IDENTIFY
        await ws.send_json({"op": 2, "d": {"token": "wrong", "intents": 1}})
        assert (await ws.receive()).data == 4004


async def _intents_filter(http: aiohttp.ClientSession, gateway: GatewayFake) -> None:
    async with http.ws_connect(gateway.url + "?v=10&encoding=json") as ws:
        await ws.receive_json()
        intents = make_intents(message_content=False).value
        await ws.send_json({"op": 1, "d": None})
        assert await ws.receive_json() == {"op": 11, "d": None}
        await ws.send_json({"op": 2, "d": {"token": TOKEN, "intents": intents}})
        ready, guild = await ws.receive_json(), await ws.receive_json()
        assert (ready["t"], ready["s"], guild["t"], guild["s"]) == ("READY", 1, "GUILD_CREATE", 2)
        plain = message_payload(1, OPEN_CHANNEL, "hello all")
        await gateway.dispatch("MESSAGE_CREATE", plain)
        assert (await ws.receive_json())["d"]["content"] == ""  # no Message Content intent
        asked = message_payload(2, OPEN_CHANNEL, mention("hi"), mentions=[bot_user()])
        await gateway.dispatch("MESSAGE_CREATE", asked)
        assert (await ws.receive_json())["d"]["content"] == mention("hi")
