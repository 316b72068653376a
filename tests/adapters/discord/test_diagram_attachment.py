"""An architecture answer's diagram is attached below its text, through real discord.py and
the fake API's multipart handling (payload_json + files[n])."""

from __future__ import annotations

import io
from typing import Any

from PIL import Image

from bot.core import Core
from tests.support.discord_gateway import OPEN_CHANNEL, bot_user, mention
from tests.support.discord_harness import Harness, run, running
from tests.support.layered_app import build_layered_app


async def _replies(h: Harness, count: int) -> list[dict[str, Any]]:
    await h.fake.wait_for(lambda: len(h.fake.bot_messages(OPEN_CHANNEL)) >= count)
    await h.settle()
    return h.fake.bot_messages(OPEN_CHANNEL)


def test_the_diagram_follows_the_answer_as_an_attachment(core: Core, make_repo: Any) -> None:
    relay = build_layered_app(make_repo("relay"))
    core.index_repo(str(relay.path), name="relay")

    async def scenario() -> None:
        async with running(core) as h:
            h.say(
                OPEN_CHANNEL,
                mention("quick question: how is relay organised?"),
                mentions=[bot_user()],
            )
            *answer, picture = await _replies(h, 2)
            assert "where to start" in "".join(m["content"] for m in answer)
            assert not any(m["attachments"] for m in answer)
            [attached] = picture["attachments"]
            assert attached["filename"] == "relay-architecture.png"
            assert attached["content_type"] == "image/png"
            image = Image.open(io.BytesIO(h.fake.uploads[attached["id"]]))
            assert image.format == "PNG" and image.height > 100
            assert picture["content"] == "Architecture of relay"

    run(scenario())


def test_an_ordinary_answer_has_no_attachment(core: Core) -> None:
    async def scenario() -> None:
        async with running(core) as h:
            h.say(
                OPEN_CHANNEL, mention("where do we retry failed webhooks?"), mentions=[bot_user()]
            )
            replies = await _replies(h, 1)
            assert all(not m["attachments"] for m in replies)

    run(scenario())
