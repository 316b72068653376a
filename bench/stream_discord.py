"""The streaming bench's Discord surfaces: the real discord.py client, logged in against the
fake REST API (with Discord's per-route rate limits) and connected to the fake gateway.

- `discord-mention`: MESSAGE_CREATE events that mention the bot, over the gateway;
- `discord-slash`: `/ask` as INTERACTION_CREATE events over the gateway (deferred, then
  answered through the interaction's webhook).

Each question is asked in a channel of its own, so every request names its answer by the
channel (or the interaction's token).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from bench.stream_measure import Load, Measured, is_note, sentence_check
from bot.core import Core
from tests.servers.discord_edits import MessageState
from tests.servers.discord_fake import DiscordFake, InteractionState
from tests.servers.discord_gateway_fake import GatewayFake
from tests.servers.discord_wire import text_channel_payload
from tests.support.discord_gateway import (
    GUILD_ID,
    bot_user,
    guild_create,
    mention,
    message_create,
    slash_interaction,
)
from tests.support.discord_harness import Harness, connected, served

SURFACES = ("discord-mention", "discord-slash")
_TEXT = re.compile(r"(POST|PATCH|DELETE) (/channels/\d+/messages(/\d+)?|/webhooks/.+)")


def run(surface: str, core: Core, load: Load) -> list[Measured]:
    """Ask every question of `load` on a client connected to fresh fakes."""
    return asyncio.run(_run(surface, core, load))


async def _run(surface: str, core: Core, load: Load) -> list[Measured]:
    async with served() as rest:
        channels = [
            rest.add_channel(text_channel_payload(rest.next_id(), GUILD_ID, f"q{i}"))
            for i in range(len(load.questions))
        ]
        guild = guild_create()
        guild["channels"] = [*guild["channels"], *channels]
        gateway = GatewayFake(guilds=[guild])
        await gateway.start()
        try:
            async with connected(core, rest, gateway, timeout=30) as (client, _):
                ask = _slash if surface == "discord-slash" else _mention
                tokens: list[str] = [""] * len(channels)

                async def one(i: int) -> float:
                    question = load.questions[i]
                    sent, tokens[i], done = await ask(rest, gateway, channels[i], question)
                    with contextlib.suppress(TimeoutError):  # counted as unfinished
                        await rest.wait_for(done, load.timeout)
                    return sent

                sent = await _closed_loop(len(channels), load.concurrency, one)
                await Harness(rest, client, core).settle()
        finally:
            await gateway.close()
        return [
            _measure(rest, int(c["id"]), token, t, load.markers)
            for c, token, t in zip(channels, tokens, sent, strict=True)
        ]


Asked = tuple[float, str, Callable[[], bool]]  # when sent, the interaction token, finished?


async def _mention(
    rest: DiscordFake, gateway: GatewayFake, channel: dict[str, Any], question: str
) -> Asked:
    cid = int(channel["id"])
    payload = rest.add_message(
        message_create(rest.next_id(), cid, mention(question), mentions=[bot_user()])
    )
    sent = time.monotonic()
    await gateway.dispatch("MESSAGE_CREATE", payload)

    def done() -> bool:
        replies = rest.bot_messages(cid)
        return bool(replies and replies[-1]["components"])

    return sent, "", done


async def _slash(
    rest: DiscordFake, gateway: GatewayFake, channel: dict[str, Any], question: str
) -> Asked:
    payload = slash_interaction(rest.next_id(), "ask", {"question": question}, channel=channel)
    state: InteractionState = rest.add_interaction(payload)
    sent = time.monotonic()
    await gateway.dispatch("INTERACTION_CREATE", payload)

    def done() -> bool:
        return bool(state.messages and state.messages[-1]["components"])

    return sent, state.token, done


async def _closed_loop(
    count: int, concurrency: int, one: Callable[[int], Awaitable[float]]
) -> list[float]:
    """`concurrency` askers, each asking the next question once its answer is finished."""
    results = [0.0] * count
    pending = iter(range(count))

    async def asker() -> None:
        for i in pending:
            results[i] = await one(i)

    await asyncio.gather(*(asker() for _ in range(concurrency)))
    return results


def _measure(
    rest: DiscordFake, cid: int, token: str, sent: float, markers: Sequence[str]
) -> Measured:
    states = [s for s in rest.states(channel_id=cid) if not is_note(s.content)]
    first = next((s for s in states if s.content.strip() and not s.deleted), None)
    finals = _final_states(states)
    finished = bool(finals and finals[-1].components)
    ours = rf"/channels/{cid}(/.*)?" + (rf"|.*/{re.escape(token)}(/.*)?" if token else "")
    mine = re.compile(ours)
    calls = [r for r in rest.requests if mine.fullmatch(r.path)]
    text_calls = [r for r in calls if _TEXT.fullmatch(f"{r.method} {r.path}")]
    edits = any(r.method == "PATCH" for r in text_calls)
    kind = "followup" if token else "reply"
    missing, repeated = sentence_check("\n".join(s.content for s in finals), markers)
    return Measured(
        first_text=first.at - sent if first else None,
        final=max(s.at for s in states) - sent if finished else None,
        calls=len(calls),
        text_calls=len(text_calls),
        refused=tuple(str(r.status) for r in calls if not 200 <= r.status < 300),
        route=f"{kind}+edits" if edits else kind,
        messages=len(finals),
        missing=missing,
        repeated=repeated,
        by_call=dict(Counter(f"{r.method} {_route_of(r.path)}" for r in calls)),
    )


def _route_of(path: str) -> str:
    """The path with its ids and tokens as placeholders: `/channels/{id}/messages/{id}`."""
    return re.sub(r"/(\d+|itoken-[0-9a-f]+|@original)(?=/|$)", "/{id}", path)


def _final_states(states: list[MessageState]) -> list[MessageState]:
    """The last state of each message still there, oldest message first."""
    last: dict[int, MessageState] = {}
    for state in states:
        last[state.message_id] = state
    return [last[m] for m in sorted(last) if not last[m].deleted]
