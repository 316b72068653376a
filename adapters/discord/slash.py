"""The application commands: /ask, /status, /repos, /map, /reindex, /help.

Discord wants a response within 3 seconds, so each command defers first
(callback type 5, "thinking") and answers later with follow-ups, which stay
valid for 15 minutes. /status, /repos, /reindex and /help are ephemeral: only
the person who asked sees them.
"""

from __future__ import annotations

import logging
from typing import Any

import discord
from discord import app_commands

from adapters.discord.context import interaction_context
from adapters.discord.replies import (
    Reply,
    answer_reply,
    command_reply,
    error_reply,
    send_followups,
)
from bot.core import Core

log = logging.getLogger(__name__)

Interaction = discord.Interaction[Any]


class SlashCommands:
    """What each command does, separate from how it is registered."""

    def __init__(self, core: Core) -> None:
        self._core = core

    async def ask(self, interaction: Interaction, question: str) -> None:
        if not await _defer(interaction, ephemeral=False):
            return
        ctx = interaction_context(interaction)
        try:
            reply = await answer_reply(self._core, question, ctx, quote=True)
        except Exception as exc:  # noqa: BLE001 - the user gets a sentence, the log the rest
            await self._fail_privately(interaction, error_reply(exc))
            return
        await _deliver(interaction, reply)

    async def command(self, interaction: Interaction, line: str) -> None:
        if not await _defer(interaction, ephemeral=True):
            return
        ctx = interaction_context(interaction)
        try:
            reply = await command_reply(self._core, line, ctx)
        except Exception as exc:  # noqa: BLE001 - the user gets a sentence, the log the rest
            reply = error_reply(exc)
        await _deliver(interaction, Reply(reply.pieces, reply.answer_id, ephemeral=True))

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
    """Add the commands to `tree` as global commands (sync decides where they go)."""

    @tree.command(name="ask", description="Ask a question about the indexed code")
    @app_commands.describe(question="What you want to know, e.g. where do we retry webhooks?")
    async def ask(interaction: Interaction, question: str) -> None:
        await slash.ask(interaction, question)

    @tree.command(name="status", description="What is indexed, at which commit, and how fresh")
    async def status(interaction: Interaction) -> None:
        await slash.command(interaction, "status")

    @tree.command(name="repos", description="The repositories this channel can see")
    async def repos(interaction: Interaction) -> None:
        await slash.command(interaction, "repos")

    @tree.command(name="map", description="The directory tree and the most referenced symbols")
    @app_commands.describe(repo="Only this repository (default: every repository here)")
    async def map_(interaction: Interaction, repo: str | None = None) -> None:
        await slash.command(interaction, f"map {repo.strip()}" if repo else "map")

    @tree.command(name="reindex", description="Re-ingest repositories now (admins only)")
    @app_commands.describe(repo="Only this repository (default: every repository here)")
    async def reindex(interaction: Interaction, repo: str | None = None) -> None:
        await slash.command(interaction, f"reindex {repo.strip()}" if repo else "reindex")

    @tree.command(name="help", description="How to ask codecite about your code")
    async def help_(interaction: Interaction) -> None:
        await slash.command(interaction, "help")
