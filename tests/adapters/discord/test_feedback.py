"""👍/👎 buttons: a click is stored through core.feedback, even after a restart."""

from __future__ import annotations

from typing import Any

from bot.core import Core
from tests.servers.discord_fake import InteractionState
from tests.servers.discord_wire import EPHEMERAL
from tests.support.discord_gateway import BOB, OPEN_CHANNEL, bot_user, mention
from tests.support.discord_harness import Harness, run, running


def buttons(message: dict[str, Any]) -> list[str]:
    return [c["custom_id"] for row in message["components"] for c in row["components"]]


async def click(h: Harness, custom_id: str, message: dict[str, Any]) -> InteractionState:
    state = h.click(custom_id, message, user=BOB)
    await h.fake.wait_for(lambda: state.messages)
    await h.settle()
    return state


def test_vote_is_stored_and_buttons_keep_working_after_a_restart(core: Core) -> None:
    async def ask() -> dict[str, Any]:
        async with running(core) as h:
            h.say(
                OPEN_CHANNEL, mention("where do we retry failed webhooks?"), mentions=[bot_user()]
            )
            await h.fake.wait_for(lambda: h.fake.bot_messages(OPEN_CHANNEL))
            await h.settle()
            (answer,) = h.fake.bot_messages(OPEN_CHANNEL)
            up, _ = buttons(answer)
            state = await click(h, up, answer)
            (callback,) = h.fake.calls("POST", rf"/interactions/{state.id}/.+/callback")
            assert callback.body["type"] == 4
            assert callback.body["data"]["flags"] == EPHEMERAL
            assert callback.body["data"]["allowed_mentions"] == {"parse": []}
            assert callback.body["data"]["content"] == "Thanks for the feedback."
            return answer

    answer = run(ask())
    (row,) = core.feedback.list()
    assert (row.voter, row.vote, row.platform) == (BOB["id"], 1, "discord")
    assert row.question == "where do we retry failed webhooks?"
    assert row.channel == str(OPEN_CHANNEL)
    assert row.citations and row.citations[0].startswith("src/hooks.py:L")
    answer_id = buttons(answer)[0].rsplit(":", 1)[1]
    assert row.answer_id == answer_id

    async def after_restart() -> None:
        async with running(core) as h:  # a new client: nothing in memory about that answer
            _, down = buttons(answer)
            await click(h, down, answer)
            unknown = "codecite:vote:up:0000feed"
            button = {"type": 2, "style": 2, "label": "x", "custom_id": unknown}
            forged = {**answer, "components": [{"type": 1, "components": [button]}]}
            state = await click(h, unknown, forged)
            assert state.messages[0]["content"] == "That answer is no longer on record."

    run(after_restart())
    (row,) = core.feedback.list()
    assert (row.voter, row.vote) == (BOB["id"], -1)  # the vote was changed, not duplicated
