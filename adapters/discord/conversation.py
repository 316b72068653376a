"""A thread's history as conversation turns, and whether codecite took part in it.

codecite continues a thread it created or posted in. Its own messages become
assistant turns (footer lines dropped), other people's become user turns
(mentions of the bot dropped); other bots are left out.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

import discord

from adapters.discord.render import strip_footer, strip_mention
from bot.models import Turn

log = logging.getLogger(__name__)

HISTORY_LIMIT = 40  # messages read from the thread before the new one
MAX_TURNS = 20


@dataclass(frozen=True, slots=True)
class ThreadHistory:
    involved: bool  # codecite created the thread or posted in it
    turns: tuple[Turn, ...]


async def read_thread(thread: discord.Thread, before: discord.Message, me: int) -> ThreadHistory:
    """The thread before `before`, oldest first, with its starter message when there is one."""
    history = [m async for m in thread.history(limit=HISTORY_LIMIT, before=before)]
    history.reverse()  # Discord returns newest first
    involved = thread.owner_id == me or any(m.author.id == me for m in history)
    if not involved:
        return ThreadHistory(False, ())
    starter = await _starter(thread, history)
    messages = [starter, *history] if starter is not None else history
    return ThreadHistory(True, to_turns(messages, me))


def reply_turns(message: discord.Message, me: int) -> tuple[Turn, ...]:
    """A reply to one of codecite's answers carries that answer as context."""
    ref = message.reference
    resolved = ref.resolved if ref is not None else None
    if isinstance(resolved, discord.Message) and resolved.author.id == me:
        text = strip_footer(resolved.content)
        return (Turn("assistant", text),) if text else ()
    return ()


def to_turns(messages: Iterable[discord.Message], me: int) -> tuple[Turn, ...]:
    turns: list[Turn] = []
    for message in messages:
        if message.author.id == me:
            turn = Turn("assistant", strip_footer(message.content))
        elif message.author.bot:
            continue
        else:
            turn = Turn("user", strip_mention(message.content, me))
        if not turn.text:
            continue  # system messages, or content hidden without the Message Content intent
        if turns and turns[-1].role == turn.role:
            # An answer split over several messages (or several user lines) is one turn.
            turns[-1] = Turn(turn.role, f"{turns[-1].text}\n{turn.text}")
        else:
            turns.append(turn)
    return tuple(turns[-MAX_TURNS:])


async def _starter(
    thread: discord.Thread, history: list[discord.Message]
) -> discord.Message | None:
    """The channel message a thread was started from (it lives in the parent channel)."""
    if thread.starter_message is not None:
        return thread.starter_message  # seen on the gateway and still cached
    for message in history:
        ref = message.reference
        starter = message.type is discord.MessageType.thread_starter_message
        if starter and ref is not None and isinstance(ref.resolved, discord.Message):
            return ref.resolved
    parent = thread.parent
    if not isinstance(parent, discord.TextChannel):
        return None  # forum posts keep their first message inside the thread
    try:
        return await parent.fetch_message(thread.id)
    except discord.NotFound:
        return None  # a thread not started from a message
    except discord.HTTPException as exc:
        log.info("starter message of thread %s unavailable (HTTP %s)", thread.id, exc.status)
        return None
