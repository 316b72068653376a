"""From a question to message pieces, and from pieces to Discord sends.

Core calls block (retrieval, the model, SQLite), so they run in worker
threads of the process's bounded answer queue; the event loop keeps serving the gateway.
Every send carries `AllowedMentions.none()` and suppresses link previews, and a
nonce that Discord enforces: discord.py does not retry a send whose connection
was lost (the answer would be gone), so that send is repeated once with the
same nonce, and Discord returns the first message instead of posting twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import discord

from adapters.common.errors import user_facing
from adapters.discord.confirm import confirm_view
from adapters.discord.feedback import NO_MENTIONS, vote_view
from adapters.discord.files import send_files
from adapters.discord.live import ChannelSurface
from adapters.discord.render import render_answer, render_text
from bot.commands import Command, Syntax, parse
from bot.core import Context, Core
from bot.models import Answer, Attachment, Turn

SYNTAX = Syntax(
    "/{}",
    "mention me with a question, DM me, or use `{ask_name}`",
    confirm="the button below, or mention me with `{line}`",
)

T = TypeVar("T")

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Reply:
    """What to post: pieces under the size limit, and the answer id for vote buttons."""

    pieces: tuple[str, ...]
    answer_id: str = ""
    ephemeral: bool = False
    confirm: str = ""  # the line a confirmation button under the last piece sends
    files: tuple[Attachment, ...] = ()  # sent below the last piece (a diagram)


def error_reply(exc: BaseException) -> Reply:
    """One sentence and an incident id (details go to the log); only the asker needs it."""
    return Reply(tuple(render_text(user_facing(exc))), ephemeral=True)


OnWait = Callable[[int], Awaitable[object]]


async def queued(core: Core, work: Callable[[], T], on_wait: OnWait | None = None) -> T:
    """Run blocking core work in the process's bounded answer queue (never on the event loop).

    Raises RateLimited at once when the line is full; `on_wait` hears the place in
    line when the work does not start right away.
    """
    ticket = core.submit(work)
    if ticket.position and on_wait is not None:
        with contextlib.suppress(discord.HTTPException):
            await on_wait(ticket.position)
    return await asyncio.wrap_future(ticket.future)


async def answer_reply(
    core: Core,
    question: str,
    ctx: Context,
    conversation: Sequence[Turn] = (),
    *,
    quote: bool = False,
    on_wait: OnWait | None = None,
) -> Reply:
    answer = await queued(core, lambda: core.ask(question, ctx, tuple(conversation)), on_wait)
    return _answered(question, answer, quote=quote)


async def command_reply(
    core: Core, line: str | Command, ctx: Context, *, on_wait: OnWait | None = None
) -> Reply:
    """A shared command (`status`, `repos`, `reindex`, `ask ...`) or a bare question."""
    command = parse(line) if isinstance(line, str) else line
    if command.spec.admin_only:  # reindex, forget: the ingest line, never an answer worker
        started = await asyncio.to_thread(core.run_command, command, ctx, SYNTAX)
        text = await asyncio.wrap_future(started.later) if started.later else started.text
        return Reply(tuple(render_text(text)), confirm=started.confirm)
    result = await queued(core, lambda: core.run_command(command, ctx, SYNTAX), on_wait)
    if result.answer is not None:
        return _answered("", result.answer, quote=False)
    return Reply(tuple(render_text(result.text)), ephemeral=result.ephemeral)


def _answered(question: str, answer: Answer, *, quote: bool) -> Reply:
    pieces = tuple(render_answer(answer, question=question if quote else ""))
    return Reply(pieces, answer_id=answer.answer_id, files=answer.attachments)


def _extras(reply: Reply, index: int) -> dict[str, Any]:
    """Vote buttons, or a confirmation button, go under the last piece only."""
    if index != len(reply.pieces) - 1:
        return {}
    if reply.answer_id:
        return {"view": vote_view(reply.answer_id)}
    view = confirm_view(reply.confirm) if reply.confirm else None
    return {"view": view} if view is not None else {}


async def send_to_channel(
    channel: discord.abc.Messageable, reply: Reply, *, reference: discord.Message | None = None
) -> list[discord.Message]:
    """Post the pieces in order; the first replies to `reference` (without pinging its
    author), the others to the first (`ChannelSurface`)."""
    surface = ChannelSurface(channel, reference)
    sent: list[discord.Message] = []
    for index, piece in enumerate(reply.pieces):
        sent.append(await surface.post(index, piece, _extras(reply, index).get("view")))
    await send_files(channel.send, reply.files)
    return sent


async def send_followups(interaction: discord.Interaction[Any], reply: Reply) -> None:
    """Answer a deferred interaction: the first follow-up replaces the "thinking" message."""
    for index, piece in enumerate(reply.pieces):
        await interaction.followup.send(
            piece,
            ephemeral=reply.ephemeral,
            allowed_mentions=NO_MENTIONS,
            suppress_embeds=True,
            **_extras(reply, index),
        )
    await send_files(interaction.followup.send, reply.files)
