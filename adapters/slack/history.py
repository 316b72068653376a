"""A thread's history, rebuilt from Slack (conversations.replies) on every follow-up.

The history is never kept in memory: any process can answer any follow-up, and
a restart loses nothing. Messages by the bot become assistant turns, everyone
else's user turns; the newest turns that fit the caps are kept. When Slack
cannot be read, `AnsweredThreads` (which threads this process answered in)
decides whether a follow-up is still the bot's to answer, without history.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from bot.models import Turn

log = logging.getLogger(__name__)

HISTORY_MESSAGES = 20
HISTORY_CHARS = 12_000
PAGE_SIZE = 200
MAX_PAGES = 5  # threads longer than 1,000 messages are read only in part
REMEMBERED_THREADS = 4096

_LINK = re.compile(r"<(?:https?://[^|>]+)\|([^>]+)>|<(https?://[^>|]+)>")
_USER_SUBTYPES = {None, "file_share", "thread_broadcast", "bot_message"}


@dataclass(frozen=True, slots=True)
class BotIdentity:
    user_id: str
    bot_id: str = ""

    def wrote(self, message: Mapping[str, Any]) -> bool:
        if self.user_id and message.get("user") == self.user_id:
            return True
        return bool(self.bot_id) and message.get("bot_id") == self.bot_id

    def strip_mention(self, text: str) -> str:
        if not self.user_id:
            return text.strip()
        return re.sub(rf"<@{re.escape(self.user_id)}(?:\|[^>]*)?>", " ", text).strip()


@dataclass(frozen=True, slots=True)
class ThreadHistory:
    bot_answered: bool  # the bot has a message in the thread
    turns: tuple[Turn, ...]


NO_HISTORY = ThreadHistory(bot_answered=False, turns=())


class AnsweredThreads:
    """The threads (channel, thread_ts) this process last posted answers in, bounded."""

    def __init__(self, size: int = REMEMBERED_THREADS) -> None:
        self._size = size
        self._threads: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._lock = threading.Lock()

    def remember(self, channel: str, thread_ts: str) -> None:
        with self._lock:
            self._threads[(channel, thread_ts)] = None
            self._threads.move_to_end((channel, thread_ts))
            while len(self._threads) > self._size:
                self._threads.popitem(last=False)

    def answered(self, channel: str, thread_ts: str) -> bool:
        with self._lock:
            return (channel, thread_ts) in self._threads


def load_thread(
    client: WebClient, channel: str, thread_ts: str, *, before_ts: str, bot: BotIdentity
) -> ThreadHistory:
    """The thread's messages older than `before_ts` as turns; NO_HISTORY if Slack refuses."""
    history = read_thread(client, channel, thread_ts, before_ts=before_ts, bot=bot)
    return NO_HISTORY if history is None else history


def read_thread(
    client: WebClient, channel: str, thread_ts: str, *, before_ts: str, bot: BotIdentity
) -> ThreadHistory | None:
    """Like `load_thread`, but None when Slack could not be read (after the client's retries)."""
    try:
        messages = list(_replies(client, channel, thread_ts))
    except (SlackClientError, OSError) as exc:
        code = exc.response.get("error") if isinstance(exc, SlackApiError) else type(exc).__name__
        log.warning("conversations.replies failed for %s/%s: %s", channel, thread_ts, code)
        return None
    return history_from(messages, before_ts=before_ts, bot=bot)


def _replies(client: WebClient, channel: str, thread_ts: str) -> Iterable[Mapping[str, Any]]:
    cursor = ""
    for _ in range(MAX_PAGES):
        page = client.conversations_replies(
            channel=channel, ts=thread_ts, limit=PAGE_SIZE, cursor=cursor or None
        )
        yield from page.get("messages") or []
        cursor = (page.get("response_metadata") or {}).get("next_cursor") or ""
        if not cursor:
            return


def history_from(
    messages: Iterable[Mapping[str, Any]], *, before_ts: str, bot: BotIdentity
) -> ThreadHistory:
    """Turns from raw Slack messages (oldest first), capped to the newest that fit."""
    limit = ts_key(before_ts)
    earlier = [m for m in messages if ts_key(str(m.get("ts") or "")) < limit]
    answered = any(bot.wrote(m) for m in earlier)
    turns: list[Turn] = []
    for m in earlier:
        if m.get("subtype") not in _USER_SUBTYPES:
            continue  # joins, edits, deletions...
        text = _plain(str(m.get("text") or ""))
        if bot.wrote(m):
            turns.append(Turn("assistant", text))
        elif bot.strip_mention(text):
            turns.append(Turn("user", bot.strip_mention(text)))
    return ThreadHistory(bot_answered=answered, turns=_capped(_merged(turns)))


def ts_key(ts: str) -> tuple[int, int]:
    """Slack timestamps ("1700000000.000100") in order; floats lose the last digits."""
    seconds, _, micros = ts.partition(".")
    try:
        return int(seconds or 0), int(micros or 0)
    except ValueError:
        return 0, 0


def _plain(text: str) -> str:
    """Slack markup back to readable text: links to their labels, entities unescaped."""
    text = _LINK.sub(lambda m: m.group(1) or m.group(2), text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").strip()


def _merged(turns: list[Turn]) -> list[Turn]:
    """One turn per speaker change: a split answer is one assistant turn."""
    merged: list[Turn] = []
    for turn in turns:
        if merged and merged[-1].role == turn.role:
            merged[-1] = Turn(turn.role, f"{merged[-1].text}\n\n{turn.text}")
        else:
            merged.append(turn)
    return merged


def _capped(turns: list[Turn]) -> tuple[Turn, ...]:
    kept: list[Turn] = []
    budget = HISTORY_CHARS
    for turn in reversed(turns[-HISTORY_MESSAGES:]):
        if budget <= 0:
            break
        text = turn.text if len(turn.text) <= budget else "…" + turn.text[-(budget - 1) :]
        kept.append(Turn(turn.role, text))
        budget -= len(text)
    return tuple(reversed(kept))
