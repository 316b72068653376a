"""Commands that ask first (`forget`): a red button under the question that confirms it.

The button carries the line that confirms ("forget shop yes") in its custom_id
(`codecite:confirm:<line>`), so a click is understood by any running instance, even
after a restart. The client runs that line with the clicker's own rights and scope
(`adapters.discord.slash`), as if they had typed it.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Protocol, runtime_checkable

import discord

from bot.commands import CONFIRM

log = logging.getLogger(__name__)

PREFIX = "codecite:confirm:"
MAX_CUSTOM_ID = 100  # Discord's limit
TEMPLATE = rf"{PREFIX}(?P<line>.{{1,{MAX_CUSTOM_ID - len(PREFIX)}}})"


def confirm_view(line: str) -> discord.ui.View | None:
    """The button for `line`; None when its id would exceed Discord's limit."""
    if len(PREFIX + line) > MAX_CUSTOM_ID:
        return None
    view = discord.ui.View(timeout=None)
    view.add_item(ConfirmButton(line))
    return view


class ConfirmButton(
    discord.ui.DynamicItem[discord.ui.Button[discord.ui.View]],
    template=TEMPLATE,
):
    def __init__(self, line: str) -> None:
        super().__init__(
            discord.ui.Button(
                style=discord.ButtonStyle.danger,
                label=line.removesuffix(f" {CONFIRM}").capitalize()[:80],  # "Forget shop"
                custom_id=PREFIX + line,
            )
        )
        self.line = line

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> ConfirmButton:
        return cls(match["line"])

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        client = interaction.client
        if isinstance(client, ConfirmsClicks):
            await client.on_confirm(interaction, self.line)
        else:
            log.error("confirmation clicked on a client that cannot run it")


@runtime_checkable
class ConfirmsClicks(Protocol):
    """The client: runs a confirmed line for whoever clicked (`SlashCommands.confirm`)."""

    async def on_confirm(self, interaction: discord.Interaction[Any], line: str) -> None: ...
