"""The fake Discord API refuses edits and webhook calls as Discord does, and keeps its buckets."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import aiohttp

from tests.servers.discord_fake import APP_ID, TOKEN, DiscordFake
from tests.servers.discord_limits import RateLimits, rule
from tests.servers.discord_wire import SUPPRESS_EMBEDS, text_channel_payload, user_payload
from tests.support.discord_gateway import slash_interaction

CHANNEL, GUILD = 1_400_000_000_000_000_001, 1_400_000_000_000_000_002
BOT = {"Authorization": f"Bot {TOKEN}"}
Call = Callable[..., Awaitable[tuple[int, Any, Any]]]


@asynccontextmanager
async def fake_api(limits: RateLimits | None = None) -> AsyncIterator[tuple[DiscordFake, Call]]:
    fake = DiscordFake(limits=limits)
    base = await fake.start()
    fake.add_channel(text_channel_payload(CHANNEL, GUILD, "general"))
    async with aiohttp.ClientSession() as session:

        async def call(
            method: str, path: str, body: Any = None, *, auth: bool = True
        ) -> tuple[int, Any, Any]:
            headers = BOT if auth else {}
            async with session.request(method, base + path, json=body, headers=headers) as r:
                payload = await r.json() if r.status != 204 else None
                return r.status, payload, r.headers

        try:
            yield fake, call
        finally:
            await fake.close()


def run(coro: Awaitable[None]) -> None:
    asyncio.run(coro)  # type: ignore[arg-type]


async def post(call: Call, content: str = "hello") -> dict[str, Any]:
    status, message, _ = await call(
        "POST", f"/channels/{CHANNEL}/messages", {"content": content, "flags": SUPPRESS_EMBEDS}
    )
    assert status == 200
    return dict(message)


def test_a_message_edit_follows_discords_rules() -> None:
    async def scenario() -> None:
        async with fake_api(RateLimits(())) as (fake, call):
            message = await post(call)
            path = f"/channels/{CHANNEL}/messages/{message['id']}"
            status, edited, _ = await call("PATCH", path, {"content": "hello, world"})
            assert status == 200 and edited["content"] == "hello, world"
            assert edited["edited_timestamp"] is not None
            status, error, _ = await call("PATCH", path, {"content": "x" * 2001})
            assert (status, error["code"]) == (400, 50035)
            status, error, _ = await call("PATCH", path, {"content": ""})
            assert (status, error["code"]) == (400, 50006)  # nothing left to show
            status, error, _ = await call("PATCH", path, {"content": "hi", "flags": 4096})
            assert (status, error["code"]) == (400, 50035)  # only SUPPRESS_EMBEDS may change
            unknown = f"/channels/{CHANNEL}/messages/{fake.next_id()}"
            status, error, _ = await call("PATCH", unknown, {"content": "hi"})
            assert (status, error["code"]) == (404, 10008)
            theirs = fake.add_message(
                {
                    "id": str(fake.next_id()),
                    "channel_id": str(CHANNEL),
                    "author": user_payload(7, "alice"),
                    "content": "mine",
                }
            )
            status, error, _ = await call(
                "PATCH", f"/channels/{CHANNEL}/messages/{theirs['id']}", {"content": "no"}
            )
            assert (status, error["code"]) == (403, 50005)
            status, _, _ = await call("PATCH", path, {"content": "hi"}, auth=False)
            assert status == 401
            assert [s.content for s in fake.states(message_id=int(message["id"]))] == [
                "hello",
                "hello, world",
            ]
            status, _, _ = await call("DELETE", path)
            assert status == 204
            assert fake.states(message_id=int(message["id"]))[-1].deleted
            assert fake.screen(CHANNEL, at=fake.timeline[-1].at) == []

    run(scenario())


def test_edits_over_a_channel_bucket_get_429_with_discords_headers() -> None:
    clock = itertools.count()  # one "second" per request: the window never resets by itself
    limits = RateLimits(
        (rule("edit-bucket", "PATCH", r"/channels/(\d+)/messages/\d+", 3, 60.0),),
        clock=lambda: float(next(clock)),
    )

    async def scenario() -> None:
        async with fake_api(limits) as (fake, call):
            message = await post(call)
            path = f"/channels/{CHANNEL}/messages/{message['id']}"
            remaining = []
            for n in range(3):
                status, _, headers = await call("PATCH", path, {"content": f"edit {n}"})
                assert status == 200
                remaining.append(headers["X-RateLimit-Remaining"])
                assert headers["X-RateLimit-Bucket"] == "edit-bucket"
                assert float(headers["X-RateLimit-Reset-After"]) > 0
                assert float(headers["X-RateLimit-Reset"]) > 1_700_000_000
            assert remaining == ["2", "1", "0"]
            status, body, headers = await call("PATCH", path, {"content": "one too many"})
            assert status == 429
            assert body["global"] is False and body["retry_after"] > 0
            assert headers["Via"] and headers["X-RateLimit-Scope"] == "user"
            assert int(headers["Retry-After"]) >= 1
            assert fake.states(message_id=int(message["id"]))[-1].content == "edit 2"
            assert limits.exceeded == [("PATCH", path)]

    run(scenario())


def test_interaction_webhook_edits_need_a_response_and_a_live_token() -> None:
    async def scenario() -> None:
        async with fake_api(RateLimits(())) as (fake, call):  # no buckets: rules only
            channel = fake.channels[CHANNEL]
            payload = slash_interaction(fake.next_id(), "ask", {"question": "q"}, channel=channel)
            state = fake.add_interaction(payload)
            original = f"/webhooks/{APP_ID}/{state.token}/messages/@original"
            status, error, _ = await call("PATCH", original, {"content": "too early"}, auth=False)
            assert (status, error["code"]) == (404, 10015)  # no response yet: Unknown Webhook
            callback = f"/interactions/{state.id}/{state.token}/callback"
            status, _, _ = await call("POST", callback, {"type": 5}, auth=False)
            assert status == 204
            status, message, _ = await call("PATCH", original, {"content": "filled"}, auth=False)
            assert status == 200 and [m["content"] for m in state.messages] == ["filled"]
            status, error, _ = await call("PATCH", original, {"content": "y" * 2001}, auth=False)
            assert (status, error["code"]) == (400, 50035)
            other = f"/webhooks/{APP_ID}/{state.token}/messages/{fake.next_id()}"
            status, error, _ = await call("PATCH", other, {"content": "?"}, auth=False)
            assert (status, error["code"]) == (404, 10008)
            status, _, _ = await call("PATCH", original, {"content": "edited"}, auth=False)
            assert status == 200 and state.messages[0]["content"] == "edited"
            assert [s.content for s in fake.states(message_id=int(message["id"]))] == [
                "filled",
                "edited",
            ]
            fake.expire_interactions()
            status, error, _ = await call("PATCH", original, {"content": "late"}, auth=False)
            assert (status, error["code"]) == (401, 50027)
            followup = f"/webhooks/{APP_ID}/{state.token}"
            status, error, _ = await call("POST", followup, {"content": "late"}, auth=False)
            assert (status, error["code"]) == (401, 50027)

    run(scenario())
