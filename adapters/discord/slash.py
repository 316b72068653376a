"""The application commands: /ask, /status, /repos, /map, /reindex, /forget, /help.

Discord wants a response within 3 seconds, so each command defers first
(callback type 5, "thinking") and answers later with follow-ups, which stay
valid for 15 minutes. /status, /repos, /reindex, /forget and /help are ephemeral:
only the person who asked sees them. /forget asks first, with a button
(`adapters.discord.confirm`) whose click comes back here (`confirm`).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

import discord
from discord import app_commands

from adapters.discord.context import Admins, interaction_context
from adapters.discord.live import InteractionSurface
from adapters.discord.replies import (
    Reply,
    answer_reply,
    command_reply,
    error_reply,
    send_followups,
)
from adapters.discord.streaming import stream_reply, streaming_on
from bot.commands import (
    ADMINS_ONLY,
    ASK,
    FORGET,
    HELP,
    MAP,
    REINDEX,
    REPOS,
    STATUS,
    Command,
    forget_target,
    parse,
)
from bot.core import Core

log = logging.getLogger(__name__)

Interaction = discord.Interaction[Any]


class SlashCommands:
    """What each command does, separate from how it is registered."""

    def __init__(self, core: Core, admins: Admins) -> None:
        self._core = core
        self._admins = admins

    async def ask(self, interaction: Interaction, question: str) -> None:
        if not await _defer(interaction, ephemeral=False):
            return
        ctx = interaction_context(interaction, self._admins)
        if streaming_on(self._core):
            surface = InteractionSurface(interaction)
            outcome = await stream_reply(
                self._core,
                question,
                ctx,
                surface,
                quote=question,
                what=f"the answer to interaction {interaction.id}",
            )
            if outcome.error is not None:
                await self._fail_privately(interaction, error_reply(outcome.error))
            return
        try:
            reply = await answer_reply(self._core, question, ctx, quote=True)
        except Exception as exc:  # noqa: BLE001 - the user gets a sentence, the log the rest
            await self._fail_privately(interaction, error_reply(exc))
            return
        await _deliver(interaction, reply)

    async def command(self, interaction: Interaction, line: Command) -> None:
        if not await _defer(interaction, ephemeral=True):
            return
        ctx = interaction_context(interaction, self._admins)
        try:
            reply = await command_reply(self._core, line, ctx)
        except Exception as exc:  # noqa: BLE001 - the user gets a sentence, the log the rest
            reply = error_reply(exc)
        await _deliver(interaction, replace(reply, ephemeral=True))

    async def confirm(self, interaction: Interaction, line: str) -> None:
        """A confirmation button was clicked: run its line (`forget shop yes`) for the
        clicker, with their own rights and scope; whatever follows only they see."""
        command = parse(line)
        if command.spec is not FORGET or not forget_target(command.argument)[1]:
            log.warning("confirmation button with an unexpected line ignored")
            return
        await self.command(interaction, command)

    async def _fail_privately(self, interaction: Interaction, reply: Reply) -> None:
        """/ask was deferred publicly; an error is only the asker's business."""
        try:
            await interaction.delete_original_response()
        except discord.HTTPException as exc:
            log.info("could not remove the pending /ask response (HTTP %s)", exc.status)
        await _deliver(interaction, reply)


async def _defer(interaction: Interaction, *, ephemeral: bool) -> bool:
    """Acknowledge at once (type 5, "thinking"); False when Discord no longer accepts it."""
    try:
        await interaction.response.defer(ephemeral=ephemeral, thinking=True)
    except discord.HTTPException as exc:
        # Usually the 3-second window passed (a stalled event loop) or a duplicate delivery.
        log.warning("could not acknowledge interaction %s (HTTP %s)", interaction.id, exc.status)
        return False
    return True


async def _deliver(interaction: Interaction, reply: Reply) -> None:
    try:
        await send_followups(interaction, reply)
    except discord.HTTPException as exc:
        # Most often the 15-minute follow-up window has passed (a long reindex).
        log.warning("follow-up for interaction %s failed (HTTP %s)", interaction.id, exc.status)


def register(tree: app_commands.CommandTree[Any], slash: SlashCommands) -> None:
    """Add the commands of `bot.commands` to `tree` as global commands (sync decides where)."""

    @tree.command(name=ASK.name, description=ASK.description)
    @app_commands.describe(question=ASK.arg_description)
    async def ask(interaction: Interaction, question: str) -> None:
        await slash.ask(interaction, question)

    @tree.command(name=STATUS.name, description=STATUS.description)
    async def status(interaction: Interaction) -> None:
        await slash.command(interaction, Command(STATUS))

    @tree.command(name=REPOS.name, description=REPOS.description)
    async def repos(interaction: Interaction) -> None:
        await slash.command(interaction, Command(REPOS))

    @tree.command(name=MAP.name, description=MAP.description)
    @app_commands.describe(repo=MAP.arg_description)
    async def map_(interaction: Interaction, repo: str | None = None) -> None:
        await slash.command(interaction, Command(MAP, repo.strip() if repo else ""))

    @tree.command(name=REINDEX.name, description=REINDEX.description + ADMINS_ONLY)
    @app_commands.describe(repo=REINDEX.arg_description)
    async def reindex(interaction: Interaction, repo: str | None = None) -> None:
        await slash.command(interaction, Command(REINDEX, repo.strip() if repo else ""))

    @tree.command(name=FORGET.name, description=FORGET.description + ADMINS_ONLY)
    @app_commands.describe(repo=FORGET.arg_description)
    async def forget(interaction: Interaction, repo: str) -> None:
        await slash.command(interaction, Command(FORGET, repo.strip()))

    @tree.command(name=HELP.name, description=HELP.description)
    async def help_(interaction: Interaction) -> None:
        await slash.command(interaction, Command(HELP))
