"""The REST base URL, the bot's permissions and the OAuth2 invite link.

`codecite discord-invite` prints `invite_url(...)`; the application id comes
from an argument or from `GET /oauth2/applications/@me` with the bot token.
"""

from __future__ import annotations

import asyncio
import logging

import aiohttp
import discord
from discord.http import HTTPClient, Route

from bot.errors import ConfigError, ServiceUnavailable

log = logging.getLogger(__name__)

SCOPES = ("bot", "applications.commands")

# Everything codecite does and nothing more. No Embed Links: answers carry no
# embeds and suppress link previews; masked links in message text need no permission.
PERMISSIONS = discord.Permissions(
    view_channel=True,
    send_messages=True,
    send_messages_in_threads=True,
    create_public_threads=True,
    read_message_history=True,  # thread history for follow-ups, replies to messages
    add_reactions=True,  # the 👀 acknowledgement
    use_application_commands=True,
)


def use_api_base(url: str | None) -> None:
    """Point discord.py's REST calls at `url` (e.g. `http://127.0.0.1:PORT/api/v10`).

    `Route.BASE` is process-wide in discord.py; None leaves it unchanged.
    """
    if url:
        Route.BASE = url.rstrip("/")


def invite_url(application_id: int | str) -> str:
    """The OAuth2 URL that adds the bot with its commands and permissions to a server."""
    try:
        app_id = int(application_id)
    except ValueError as exc:
        raise ConfigError("The Discord application id must be a number.") from exc
    if app_id <= 0:
        raise ConfigError("The Discord application id must be a positive number.")
    return discord.utils.oauth_url(app_id, permissions=PERMISSIONS, scopes=SCOPES)


async def fetch_application_id(token: str, api_url: str | None = None) -> int:
    """The application id of the bot that owns `token` (two REST calls, no gateway)."""
    if not token.strip():
        raise ConfigError("DISCORD_TOKEN is not set.")
    use_api_base(api_url)
    http = HTTPClient(asyncio.get_running_loop())
    try:
        await http.static_login(token.strip())
        data = await http.application_info()
    except discord.LoginFailure as exc:
        raise ConfigError("Discord rejected DISCORD_TOKEN; check the bot token.") from exc
    except (discord.HTTPException, aiohttp.ClientError, OSError) as exc:
        raise ServiceUnavailable("Discord could not be reached; try again later.") from exc
    finally:
        await http.close()
    return int(data["id"])


def application_id_from_token(token: str, api_url: str | None = None) -> int:
    """Blocking form of `fetch_application_id`, for the CLI."""
    return asyncio.run(fetch_application_id(token, api_url))
