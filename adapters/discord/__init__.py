"""The Discord adapter: mentions, DMs, thread follow-ups and application commands.

Entry points: `serve_discord(core)` (blocking) and `invite_url(application_id)`
(`application_id_from_token(token)` finds the id when none is given).
"""

from adapters.discord.client import CodeciteClient
from adapters.discord.invite import (
    PERMISSIONS,
    application_id_from_token,
    fetch_application_id,
    invite_url,
)
from adapters.discord.serve import serve_discord

__all__ = [
    "PERMISSIONS",
    "CodeciteClient",
    "application_id_from_token",
    "fetch_application_id",
    "invite_url",
    "serve_discord",
]
