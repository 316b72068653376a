"""👍/👎 buttons under each answer, persistent across restarts.

The answer id lives in the button's custom_id (`codecite:vote:up:<id>`), so
a click is understood by any running instance, even after a restart or a
gateway RESUME: nothing about the message needs to be remembered in memory.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any, Literal, Protocol, runtime_checkable

import discord

from adapters.common.errors import user_facing
from adapters.discord.render import render_text
from bot.core import Core

log = logging.getLogger(__name__)

Vote = Literal["up", "down"]
TEMPLATE = r"codecite:vote:(?P<vote>up|down):(?P<answer>[0-9A-Za-z]{1,64})"
NO_MENTIONS = discord.AllowedMentions.none()


@runtime_checkable
class HasCore(Protocol):
    core: Core


def vote_custom_id(answer_id: str, vote: Vote) -> str:
    return f"codecite:vote:{vote}:{answer_id}"


class VoteButton(
    discord.ui.DynamicItem[discord.ui.Button[discord.ui.View]],
    template=TEMPLATE,
):
    def __init__(self, answer_id: str, vote: Vote) -> None:
        up = vote == "up"
        super().__init__(
            discord.ui.Button(
                style=discord.ButtonStyle.secondary,
                emoji="👍" if up else "👎",
                label="Helpful" if up else "Not helpful",
                custom_id=vote_custom_id(answer_id, vote),
            )
        )
        self.answer_id = answer_id
        self.vote: Vote = vote

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> VoteButton:
        return cls(match["answer"], "up" if match["vote"] == "up" else "down")

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        client = interaction.client
        if not isinstance(client, HasCore):
            log.error("vote button clicked on a client without a core")
            return
        voter = str(interaction.user.id)
        value = 1 if self.vote == "up" else -1
        try:
            known = await asyncio.to_thread(client.core.record_vote, self.answer_id, voter, value)
        except Exception as exc:  # noqa: BLE001 - the user gets a sentence, the log the rest
            text = user_facing(exc)
        else:
            text = "Thanks for the feedback." if known else "That answer is no longer on record."
        await interaction.response.send_message(
            render_text(text)[0], ephemeral=True, allowed_mentions=NO_MENTIONS
        )


def vote_view(answer_id: str) -> discord.ui.View:
    """Buttons for one answer; timeout None so the view never expires."""
    view = discord.ui.View(timeout=None)
    view.add_item(VoteButton(answer_id, "up"))
    view.add_item(VoteButton(answer_id, "down"))
    return view
