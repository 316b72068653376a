"""An answer's files (an architecture diagram) as Discord attachments, sent below its text.

Discord takes files in a multipart request beside the message's JSON (`payload_json`);
discord.py builds it from `discord.File`. The diagram goes in a message of its own right
after the answer, so the answer's text and buttons stay as they are on every path (a
reply, a stream, a slash command's follow-ups). A refused upload loses nothing but the
picture: it is logged, the text is already there.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Awaitable, Callable, Sequence

import aiohttp
import discord

from adapters.discord.feedback import NO_MENTIONS
from bot.models import Attachment

log = logging.getLogger(__name__)

MAX_DESCRIPTION = 1024  # Discord's limit on an attachment's description (alt text)

Send = Callable[..., Awaitable[object]]


def discord_files(attachments: Sequence[Attachment]) -> list[discord.File]:
    return [
        discord.File(io.BytesIO(a.data), filename=a.filename, description=a.title[:MAX_DESCRIPTION])
        for a in attachments
    ]


async def send_files(send: Send, attachments: Sequence[Attachment]) -> None:
    """Post `attachments` with `send` (a channel's or a follow-up webhook's)."""
    if not attachments:
        return
    titles = "; ".join(a.title for a in attachments)
    try:
        await send(titles, files=discord_files(attachments), allowed_mentions=NO_MENTIONS)
    except (discord.HTTPException, aiohttp.ClientConnectionError) as exc:
        log.warning("could not attach %d file(s): %s", len(attachments), type(exc).__name__)
