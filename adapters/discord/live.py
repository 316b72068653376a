"""Messages that show a growing answer: posted once, then edited, at most once a second each.

`LiveMessages.show(pieces)` brings the messages of one reply to `pieces`: a
piece without a message is posted, a changed one is edited when its message
was last changed at least `EDIT_GAP` ago (with `wait`, it waits for that).
Discord's own rate-limit headers are left to discord.py, which holds a request
until its bucket has room and repeats one answered 429; an edit carries the
whole content, so a delayed or repeated one never loses text, and a post that
lost its connection is repeated with the same nonce, which Discord answers
with the message it already made. Where the messages live is a `Surface`: a
channel (replies to a mention) or an interaction's webhook (/ask).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import aiohttp
import discord

from adapters.discord.feedback import NO_MENTIONS
from adapters.discord.files import send_files
from bot.models import Attachment

log = logging.getLogger(__name__)

EDIT_GAP = 1.0  # seconds between two changes of one message

Handle = Any  # what a surface returns for a posted message and takes back to change it


class Surface(Protocol):
    async def post(self, index: int, content: str, view: discord.ui.View | None) -> Handle: ...

    async def edit(self, handle: Handle, content: str, view: discord.ui.View | None) -> None: ...

    async def delete(self, handle: Handle) -> None: ...

    async def attach(self, attachments: Sequence[Attachment]) -> None: ...


@dataclass
class _Shown:
    handle: Handle
    content: str
    changed_at: float  # loop time the last change was confirmed
    with_view: bool


class LiveMessages:
    """The messages of one reply, and what each of them shows."""

    def __init__(self, surface: Surface, what: str = "an answer") -> None:
        self._surface = surface
        self._what = what  # for the log: "a reply to message 123"
        self._shown: list[_Shown] = []
        self.failed = False  # Discord refused a change: the messages are left as they are

    @property
    def posted(self) -> bool:
        return bool(self._shown)

    def next_due(self, pieces: Sequence[str]) -> float | None:
        """The loop time at which `show(pieces)` could change something (None: nothing to)."""
        if self.failed:
            return None
        for index, piece in enumerate(pieces):
            if index >= len(self._shown):
                return 0.0
            if self._shown[index].content != piece:
                return self._shown[index].changed_at + EDIT_GAP
        return None

    async def show(
        self,
        pieces: Sequence[str],
        *,
        view: discord.ui.View | None = None,
        wait: bool = False,
    ) -> None:
        """Post or edit what is due, in order; with `wait`, everything, then remove surplus
        messages. A message is posted only once those before it show their part in full.

        `view` goes under the last piece (the vote buttons of the final state).
        """
        loop = asyncio.get_running_loop()
        for index, piece in enumerate(pieces):
            if self.failed:
                return
            last_view = view if index == len(pieces) - 1 else None
            if index >= len(self._shown):
                await self._post(index, piece, last_view, loop)
                continue
            shown = self._shown[index]
            if shown.content == piece and (last_view is None or shown.with_view):
                continue
            if not wait and shown.changed_at + EDIT_GAP > loop.time():
                return  # in order: a later message never runs ahead of an unfinished one
            for _ in range(2 if wait else 1):  # the final state gets a second try
                await asyncio.sleep(max(0.0, shown.changed_at + EDIT_GAP - loop.time()))
                await self._edit(shown, piece, last_view, loop)
                if self.failed or shown.content == piece:
                    break
        if wait:
            await self._remove_after(len(pieces))

    async def _post(
        self,
        index: int,
        piece: str,
        view: discord.ui.View | None,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        try:
            handle = await self._surface.post(index, piece, view)
        except discord.HTTPException as exc:
            log.warning("could not post %s (part %d, HTTP %s)", self._what, index + 1, exc.status)
            self.failed = True
            return
        except aiohttp.ClientConnectionError as exc:
            name = type(exc).__name__
            log.warning("could not post %s (part %d, %s)", self._what, index + 1, name)
            self.failed = True
            return
        self._shown.append(_Shown(handle, piece, loop.time(), view is not None))

    async def _edit(
        self,
        shown: _Shown,
        piece: str,
        view: discord.ui.View | None,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        try:
            await self._surface.edit(shown.handle, piece, view)
        except discord.HTTPException as exc:
            # Deleted by someone, or no longer ours to change: stop updating, never repost.
            log.warning("could not update %s (HTTP %s)", self._what, exc.status)
            self.failed = True
            return
        except aiohttp.ClientConnectionError as exc:
            log.info("connection lost updating an answer (%s); next time", type(exc).__name__)
            shown.changed_at = loop.time()  # unchanged content: the next show repeats it
            return
        shown.content, shown.changed_at = piece, loop.time()
        shown.with_view = shown.with_view or view is not None

    async def _remove_after(self, count: int) -> None:
        """The final text is shorter than what was streamed: drop messages it no longer fills."""
        while len(self._shown) > count and not self.failed:
            extra = self._shown.pop()
            with contextlib.suppress(discord.HTTPException, aiohttp.ClientConnectionError):
                await self._surface.delete(extra.handle)


class ChannelSurface:
    """Messages in a channel; the first replies to `reference` without pinging its author,
    and every later one replies to the first, so that two answers written at once in one
    channel stay apart however their messages interleave."""

    def __init__(
        self, channel: discord.abc.Messageable, reference: discord.Message | None = None
    ) -> None:
        self._channel = channel
        self._reference = reference
        self._first: discord.Message | None = None

    async def post(self, index: int, content: str, view: discord.ui.View | None) -> Handle:
        extras: dict[str, Any] = {"view": view} if view is not None else {}
        replied = self._reference if index == 0 else self._first
        if replied is not None:
            extras["reference"] = replied.to_reference(fail_if_not_exists=False)
            extras["mention_author"] = False
        message = await send_once(self._channel, content, extras)
        if index == 0:
            self._first = message
        return message

    async def edit(self, handle: Handle, content: str, view: discord.ui.View | None) -> None:
        assert isinstance(handle, discord.Message)
        extras: dict[str, Any] = {"view": view} if view is not None else {}
        # `suppress` must be repeated: discord.py clears the flag on an edit without it.
        await handle.edit(content=content, allowed_mentions=NO_MENTIONS, suppress=True, **extras)

    async def delete(self, handle: Handle) -> None:
        assert isinstance(handle, discord.Message)
        await handle.delete()

    async def attach(self, attachments: Sequence[Attachment]) -> None:
        await send_files(self._channel.send, attachments)


class InteractionSurface:
    """A deferred interaction: the first follow-up fills its "thinking" response, which is
    then edited as `@original`; later pieces are further follow-ups, edited by id."""

    def __init__(self, interaction: discord.Interaction[Any]) -> None:
        self._interaction = interaction

    async def post(self, index: int, content: str, view: discord.ui.View | None) -> Handle:
        extras: dict[str, Any] = {"view": view} if view is not None else {}
        # A follow-up, not an edit, fills the response: only a new message can carry
        # SUPPRESS_EMBEDS through discord.py, and edits keep it.
        message = await self._interaction.followup.send(
            content, wait=True, allowed_mentions=NO_MENTIONS, suppress_embeds=True, **extras
        )
        return None if index == 0 else message  # None: addressed as @original

    async def edit(self, handle: Handle, content: str, view: discord.ui.View | None) -> None:
        extras: dict[str, Any] = {"view": view} if view is not None else {}
        if handle is None:
            await self._interaction.edit_original_response(
                content=content, allowed_mentions=NO_MENTIONS, **extras
            )
            return
        assert isinstance(handle, discord.WebhookMessage)
        await handle.edit(content=content, allowed_mentions=NO_MENTIONS, **extras)

    async def delete(self, handle: Handle) -> None:
        if handle is None:
            await self._interaction.delete_original_response()
        else:
            assert isinstance(handle, discord.WebhookMessage)
            await handle.delete()

    async def attach(self, attachments: Sequence[Attachment]) -> None:
        await send_files(self._interaction.followup.send, attachments)


async def send_once(
    channel: discord.abc.Messageable, piece: str, extras: dict[str, Any]
) -> discord.Message:
    """Send one piece; after a lost connection, again with the same nonce (no duplicate)."""
    nonce = uuid.uuid4().hex[:25]  # Discord's limit: 25 characters

    async def send() -> discord.Message:
        return await channel.send(
            piece, allowed_mentions=NO_MENTIONS, suppress_embeds=True, nonce=nonce, **extras
        )

    try:
        return await send()
    except aiohttp.ClientConnectionError as exc:
        log.info("connection lost sending a message (%s); sending again", type(exc).__name__)
    return await send()
