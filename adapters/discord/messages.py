"""Mentions, direct messages and thread follow-ups.

Without the privileged Message Content intent Discord still delivers the text
of messages that mention the bot and of DMs, which is all codecite needs;
with it, follow-ups in codecite's threads need no mention. The handler keeps
no per-connection state, so gateway reconnects and RESUMEs cannot confuse it.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from typing import Final, Literal

import aiohttp
import discord

from adapters.discord.context import Admins, message_context
from adapters.discord.conversation import read_thread, reply_turns
from adapters.discord.feedback import NO_MENTIONS
from adapters.discord.live import ChannelSurface
from adapters.discord.render import strip_mention, thread_name
from adapters.discord.replies import (
    OnWait,
    Reply,
    answer_reply,
    command_reply,
    error_reply,
    send_to_channel,
)
from adapters.discord.streaming import question_of, stream_reply, streams
from bot.core import Context, Core
from bot.models import Turn
from bot.runtime.queue import in_line

log = logging.getLogger(__name__)

ACK_EMOJI = "👀"
THREAD_ARCHIVE_MINUTES: Final[Literal[1440]] = 1440  # a day
_ANSWERABLE = (discord.MessageType.default, discord.MessageType.reply)


@dataclass(frozen=True, slots=True)
class Request:
    text: str
    ctx: Context
    conversation: tuple[Turn, ...] = ()
    followup: bool = False  # a message in a thread codecite is part of
    in_thread: bool = False


class MessageHandler:
    def __init__(self, client: discord.Client, core: Core, admins: Admins) -> None:
        self._client = client
        self._core = core
        self._admins = admins

    async def on_message(self, message: discord.Message) -> None:
        me = self._client.user
        if me is None or not self._worth_reading(message, me.id):
            return
        try:
            request = await self._request(message, me.id)
        except discord.HTTPException as exc:
            log.warning("could not read around message %s (HTTP %s)", message.id, exc.status)
            return
        if request is not None:
            await self._respond(message, request)

    def _worth_reading(self, message: discord.Message, me: int) -> bool:
        if message.author.id == me or message.type not in _ANSWERABLE:
            return False
        return not message.author.bot or self._core.config.answer_bots

    async def _request(self, message: discord.Message, me: int) -> Request | None:
        text = strip_mention(message.content, me)
        ctx = message_context(message, self._admins)
        if ctx.is_dm:
            return Request(text, ctx, reply_turns(message, me))
        mentioned = any(user.id == me for user in message.mentions)  # not @everyone/@here
        if not text and not mentioned:
            return None  # nothing to read (e.g. no Message Content intent)
        channel = await self._resolve(message.channel)
        ctx = message_context(message, self._admins, channel)  # a thread's scope: its parent's
        in_thread = isinstance(channel, discord.Thread)
        if isinstance(channel, discord.Thread) and text and self._threads_enabled(ctx):
            history = await read_thread(channel, message, me)
            if history.involved:
                return Request(text, ctx, history.turns, followup=True, in_thread=True)
        if mentioned:
            return Request(text, ctx, reply_turns(message, me), in_thread=in_thread)
        return None

    async def _resolve(self, channel: object) -> object:
        """The full channel object when the cache only had a partial one."""
        if not isinstance(channel, discord.PartialMessageable) or channel.guild_id is None:
            return channel
        try:
            return await self._client.fetch_channel(channel.id)
        except discord.HTTPException as exc:
            log.info("channel %s not fetchable (HTTP %s)", channel.id, exc.status)
            return channel

    def _threads_enabled(self, ctx: Context) -> bool:
        config = self._core.channel_config(ctx.channel)
        return config is None or config.threads

    async def _respond(self, message: discord.Message, request: Request) -> None:
        await _acknowledge(message)
        target, reference = await self._target(message, request)
        if streams(self._core, request.text, request.conversation):
            await self._stream(message, request, target, reference)
            return
        async with contextlib.AsyncExitStack() as stack:
            with contextlib.suppress(discord.HTTPException):
                await stack.enter_async_context(target.typing())
            reply = await self._compute(request, _waiting_note(target))
        await self._post(message, target, reply, reference)

    async def _stream(
        self,
        message: discord.Message,
        request: Request,
        target: discord.abc.Messageable,
        reference: discord.Message | None,
    ) -> None:
        """The answer as it is written; typing shows until its first message is out."""
        typing = contextlib.AsyncExitStack()
        with contextlib.suppress(discord.HTTPException):
            await typing.enter_async_context(target.typing())
        try:
            outcome = await stream_reply(
                self._core,
                question_of(request.text, request.conversation),
                request.ctx,
                ChannelSurface(target, reference),
                conversation=request.conversation,
                on_wait=_waiting_note(target),
                on_posted=typing.aclose,
                what=f"a reply to message {message.id}",
            )
        finally:
            await typing.aclose()
        if outcome.error is not None:
            await self._post(message, target, error_reply(outcome.error), reference)

    async def _post(
        self,
        message: discord.Message,
        target: discord.abc.Messageable,
        reply: Reply,
        reference: discord.Message | None,
    ) -> None:
        try:
            await send_to_channel(target, reply, reference=reference)
        except discord.HTTPException as exc:
            log.warning("could not post a reply to message %s (HTTP %s)", message.id, exc.status)
        except aiohttp.ClientConnectionError as exc:
            log.warning("could not post a reply to message %s (%s)", message.id, type(exc).__name__)

    async def _compute(self, request: Request, on_wait: OnWait) -> Reply:
        try:
            core, text, ctx = self._core, request.text, request.ctx
            if request.conversation:
                return await answer_reply(core, text, ctx, request.conversation, on_wait=on_wait)
            return await command_reply(core, text, ctx, on_wait=on_wait)
        except Exception as exc:  # noqa: BLE001 - the user gets a sentence, the log the rest
            return error_reply(exc)

    async def _target(
        self, message: discord.Message, request: Request
    ) -> tuple[discord.abc.Messageable, discord.Message | None]:
        """Where to answer: a new thread when the channel asks for one, else a reply."""
        if request.followup or request.in_thread or request.ctx.is_dm:
            return message.channel, (None if request.followup else message)
        config = self._core.channel_config(request.ctx.channel)
        if config is None or not config.reply_in_thread:
            return message.channel, message
        try:
            thread = await message.create_thread(
                name=thread_name(request.text), auto_archive_duration=THREAD_ARCHIVE_MINUTES
            )
        except discord.HTTPException as exc:
            log.info("could not open a thread (HTTP %s); replying in the channel", exc.status)
            return message.channel, message
        return thread, None


async def _acknowledge(message: discord.Message) -> None:
    """👀 at once, so the asker knows the question arrived while the answer is worked out."""
    try:
        await message.add_reaction(ACK_EMOJI)
    except discord.HTTPException as exc:
        log.debug("no acknowledgement reaction on %s (HTTP %s)", message.id, exc.status)


def _waiting_note(target: discord.abc.Messageable) -> OnWait:
    """Tell a channel where its question stands when the bot is busy."""

    async def note(position: int) -> object:
        return await target.send(in_line(position), allowed_mentions=NO_MENTIONS)

    return note
