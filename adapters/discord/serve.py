"""`codecite serve --discord`: run the bot until stopped."""

from __future__ import annotations

import logging
import threading

import discord

from adapters.discord.client import CodeciteClient
from adapters.discord.invite import (
    application_id_from_token,
    fetch_application_id,
    invite_url,
    use_api_base,
)
from adapters.discord.settings import DiscordSettings
from bot.core import Core
from bot.errors import ConfigError

log = logging.getLogger(__name__)

__all__ = [
    "application_id_from_token",
    "fetch_application_id",
    "invite_url",
    "serve_discord",
]


FATAL_CLOSE_CODES = {
    4004: "Discord no longer accepts DISCORD_TOKEN (it was reset or revoked); set the new token.",
    4010: "Discord refused the gateway connection (close code {code}); check the bot's settings.",
    4011: "Discord refused the gateway connection (close code {code}); check the bot's settings.",
    4012: "Discord refused the gateway connection (close code {code}); check the bot's settings.",
    4013: "Discord refused the intents codecite asked for (close code {code}).",
    4014: "The Message Content intent is not enabled for this bot (close code {code}).",
}


def serve_discord(
    core: Core,
    *,
    message_content: bool | None = None,
    settings: DiscordSettings | None = None,
    stop: threading.Event | None = None,
) -> None:
    """Blocking: connect with DISCORD_TOKEN and answer until `stop` is set (`serve` sets it
    once the answers under way have drained) or the process is stopped.

    discord.py reconnects (and RESUMEs) on its own; the handlers keep no state
    tied to a connection.
    """
    settings = settings or DiscordSettings.load()
    token = settings.token
    if token is None or not token.get_secret_value().strip():
        raise ConfigError("DISCORD_TOKEN is not set.")
    use_api_base(settings.api_url)
    if message_content is None:
        message_content = settings.message_content  # CODECITE_DISCORD_MESSAGE_CONTENT=1
    client = CodeciteClient(core, message_content=message_content, stop=stop)
    try:
        # log_handler=None: logging is configured by the entry point, not by discord.py.
        client.run(token.get_secret_value().strip(), log_handler=None)
    except discord.LoginFailure as exc:
        raise ConfigError("Discord rejected DISCORD_TOKEN; check the bot token.") from exc
    except discord.PrivilegedIntentsRequired as exc:
        raise ConfigError(
            "The Message Content intent is not enabled for this bot: enable it in the "
            "Developer Portal (Bot > Privileged Gateway Intents) or turn it off in codecite."
        ) from exc
    except discord.ConnectionClosed as exc:
        # Close codes discord.py cannot recover from: say what to fix, in one line.
        message = FATAL_CLOSE_CODES.get(exc.code)
        if message is None:
            raise
        raise ConfigError(message.format(code=exc.code)) from exc
