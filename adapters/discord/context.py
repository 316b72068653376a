"""Who asks and from where: Discord messages and interactions as core `Context`s.

A thread takes its parent channel's id, so a thread inherits the scope mapped
to the channel in codecite.toml. Roles are role ids only: a name is no proof
(anyone can create a role called "codecite-admins" in a server of their own),
and `discord.admin_role` counts only in `discord.guild_ids` (`Admins` decides,
here in the adapter; the core only sees `Context.is_admin`).
"""

from __future__ import annotations

import logging
from typing import Any

import discord

from adapters.discord.settings import discord_config
from bot.core import Context, Core
from bot.errors import ConfigError

log = logging.getLogger(__name__)

PLATFORM = "discord"


class Admins:
    """Who may run admin commands: a user id listed in `admins`, or a holder of the
    `discord.admin_role` role id in one of the servers of `discord.guild_ids`.

    A role id is matched in the server it belongs to, never a name anyone could copy.
    Read from the core's current configuration at each question, so a reloaded
    codecite.toml applies at once.
    """

    def __init__(self, core: Core) -> None:
        self._core = core

    def __call__(self, user: str, guild: str, roles: tuple[str, ...]) -> bool:
        if self._core.is_listed_admin(user):
            return True
        try:
            config = discord_config(self._core)
        except ConfigError as exc:  # checked at start; a bad reload grants no role
            log.warning("discord.admin_role ignored: %s", exc.user_message)
            return False
        in_configured_guild = guild.isdigit() and int(guild) in config.guild_ids
        return bool(config.admin_role) and in_configured_guild and config.admin_role in roles


def scope_channel_id(channel: object) -> int | None:
    """The channel whose configuration applies: the parent for a thread."""
    if isinstance(channel, discord.Thread):
        return channel.parent_id
    channel_id = getattr(channel, "id", None)
    return channel_id if isinstance(channel_id, int) else None


def member_roles(user: discord.User | discord.Member) -> tuple[str, ...]:
    """The ids of the roles the member holds in the server the message came from."""
    if not isinstance(user, discord.Member):
        return ()
    # @everyone is not a role anyone is granted (its id is the guild's).
    return tuple(str(role.id) for role in user.roles if not role.is_default())


def admin_role_warning(guild_ids: tuple[int, ...], admin_role: str) -> str:
    """A line for the start-up log when `admin_role` cannot grant anything ("" when fine)."""
    if admin_role and not guild_ids:
        return (
            "discord.admin_role is set but discord.guild_ids is empty: the role grants "
            "nothing; only the user ids in `admins` may reindex"
        )
    return ""


def message_context(
    message: discord.Message, admins: Admins, channel: object | None = None
) -> Context:
    """`channel` is the resolved channel when the cache held only a partial one."""
    channel_id = scope_channel_id(message.channel if channel is None else channel)
    guild_id = message.guild.id if message.guild is not None else _guild_id(message.channel)
    user, guild = str(message.author.id), "" if guild_id is None else str(guild_id)
    return Context(
        platform=PLATFORM,
        user=user,
        channel="" if channel_id is None else str(channel_id),
        guild=guild,
        is_dm=guild_id is None,  # no guild: a direct message
        is_admin=admins(user, guild, member_roles(message.author)),
    )


def interaction_context(interaction: discord.Interaction[Any], admins: Admins) -> Context:
    channel = scope_channel_id(interaction.channel)
    if channel is None:
        channel = interaction.channel_id
    user = str(interaction.user.id)
    guild = "" if interaction.guild_id is None else str(interaction.guild_id)
    return Context(
        platform=PLATFORM,
        user=user,
        channel="" if channel is None else str(channel),
        guild=guild,
        is_dm=interaction.guild_id is None,
        is_admin=admins(user, guild, member_roles(interaction.user)),
    )


def _guild_id(channel: object) -> int | None:
    value = getattr(channel, "guild_id", None)  # PartialMessageable of an uncached guild
    return value if isinstance(value, int) else None
