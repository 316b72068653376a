"""The discord.py client: intents, mention safety, commands, buttons and message handling.

Intents are the minimum: guilds (channel and thread cache), guild and direct
messages. Message Content is privileged and optional: mentions and DMs carry
their text without it.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

import discord
from discord import app_commands

from adapters.discord.confirm import ConfirmButton
from adapters.discord.context import Admins, admin_role_warning
from adapters.discord.feedback import NO_MENTIONS, VoteButton
from adapters.discord.messages import MessageHandler
from adapters.discord.settings import DiscordConfig, discord_config
from adapters.discord.slash import SlashCommands, register
from adapters.discord.sync import STATE_NAME, WHAT, CommandSync
from bot.core import Core

log = logging.getLogger(__name__)

STOP_POLL_SECONDS = 0.2  # how soon a stopping process disconnects


def make_intents(*, message_content: bool) -> discord.Intents:
    intents = discord.Intents.none()
    intents.guilds = True
    intents.guild_messages = True
    intents.dm_messages = True
    intents.message_content = message_content
    return intents


class CodeciteClient(discord.Client):
    """Hands every event to the core through small handlers; holds no conversation state."""

    def __init__(
        self,
        core: Core,
        *,
        message_content: bool = False,
        sync_commands: bool = True,
        stop: threading.Event | None = None,
    ) -> None:
        """`stop`: set by the process when it is stopping; the client then disconnects."""
        super().__init__(
            intents=make_intents(message_content=message_content),
            allowed_mentions=NO_MENTIONS,  # the default for every send, on top of each call's own
        )
        self.core = core
        self.discord_config: DiscordConfig = discord_config(core)  # a bad [discord] stops here
        self.tree: app_commands.CommandTree[Any] = app_commands.CommandTree(self)
        self._sync_commands = sync_commands
        self._stop = stop
        admins = Admins(core)
        self._messages = MessageHandler(self, core, admins)
        self._slash = SlashCommands(core, admins)
        register(self.tree, self._slash)

    async def setup_hook(self) -> None:
        """Runs once after login, before the gateway connects."""
        # clicks on buttons of answers (and questions) posted before a restart
        self.add_dynamic_items(VoteButton, ConfirmButton)
        if self._stop is not None:
            self._stopper = asyncio.create_task(self._close_when(self._stop))
        config = self.discord_config
        warning = admin_role_warning(config.guild_ids, config.admin_role)
        if warning:
            log.warning(warning)
        if not self._sync_commands:
            return
        if self.application_id is None:
            log.warning("no application id after login; application commands not registered")
            return
        await CommandSync(self.core.command_hashes(STATE_NAME, WHAT)).sync(
            self.tree, self.application_id, config.guild_ids
        )

    async def _close_when(self, stop: threading.Event) -> None:
        while not stop.is_set():
            await asyncio.sleep(STOP_POLL_SECONDS)
        log.info("disconnecting from Discord")
        await self.close()

    async def on_ready(self) -> None:
        user = self.user
        log.info("connected to Discord as %s in %d servers", user, len(self.guilds))

    async def on_message(self, message: discord.Message) -> None:
        await self._messages.on_message(message)

    async def on_confirm(self, interaction: discord.Interaction[Any], line: str) -> None:
        """A confirmation button was clicked (`adapters.discord.confirm.ConfirmsClicks`)."""
        await self._slash.confirm(interaction, line)
