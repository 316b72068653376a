"""Which Slack payloads are questions: pure converters from payload dicts to requests.

Rules for events (Slack sends both `app_mention` and `message` for a mention):
- `app_mention` in a channel is a question, answered in the mention's thread;
- `message` in a DM (`channel_type: im`) is a question, answered in the DM
  (at top level, or in the thread it was written in);
- `message` in a thread of a channel, without a mention, is a possible
  follow-up (answered only if the bot is already in that thread), unless it
  is side talk: "thanks!", a lone emoji, or addressed to someone ("@alice ...");
- everything else is ignored: other `message` events in channels (including
  the duplicate of a mention), edits, joins, the bot's own messages, and other
  bots' messages unless `answer_bots` is on.

Which rules of scope apply depends on the conversation (a group DM is a DM,
a channel shared with another organisation needs a mapping), which the events
do not say reliably: `context()` takes the `Conversation` that
`adapters.slack.conversations` looked up.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from adapters.slack.conversations import Conversation
from adapters.slack.history import BotIdentity
from bot.commands import ASK, FORGET, Command, parse
from bot.core import Context

PLATFORM = "slack"
Kind = Literal["mention", "dm", "followup"]

_MESSAGE_SUBTYPES = {None, "file_share", "thread_broadcast"}
_CHATTER = re.compile(
    r"^\s*(?:(?:thanks?|thank you|thx|ty|tysm|ok|okay|cool|great|nice|perfect|awesome|got it|"
    r"lol|yes|no|\+1|:[\w+-]+:)[\s!.,]*)+$",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Incoming:
    """A question someone wrote in a conversation."""

    kind: Kind
    team: str
    channel: str
    user: str
    ts: str
    thread_ts: str  # "" when the message is not in a thread
    text: str  # the bot's mention removed
    event_id: str = ""
    shared_channel: bool = False  # the envelope's is_ext_shared_channel
    user_team: str = ""  # the asker's own workspace (differs from `team` in a shared channel)

    @property
    def recipient_team(self) -> str:
        """The team a streamed answer's recipient belongs to (Slack requires it in channels)."""
        return self.user_team or self.team

    @property
    def in_thread(self) -> bool:
        return bool(self.thread_ts) and self.thread_ts != self.ts

    @property
    def reply_ts(self) -> str | None:
        """Where the answer goes: the thread (a new one under a mention); DMs stay flat."""
        if self.kind == "dm":
            return self.thread_ts or None
        return self.thread_ts or self.ts

    def keys(self) -> tuple[str, ...]:
        """Dedupe keys: the message itself (shared by app_mention and message) and the event."""
        keys = [f"{PLATFORM}:{self.team}:{self.channel}:{self.ts}"]
        if self.event_id:
            keys.append(f"{PLATFORM}:event:{self.event_id}")
        return tuple(keys)

    def context(self, conversation: Conversation, *, is_admin: bool = False) -> Context:
        if self.shared_channel:
            conversation = conversation.shared()  # Slack says so before any cache expires
        return _context(self.user, self.channel, self.team, conversation, is_admin)

    @property
    def command(self) -> Command | None:
        """`@codecite help` (or status, repos) alone is that command, not a search; so is
        `@codecite forget <repo>` (admins only; it asks first)."""
        command = parse(self.text)
        wanted = command.is_bare_quick or command.spec is FORGET
        return command if self.text.strip() and wanted else None


def _context(
    user: str, channel: str, team: str, conversation: Conversation, is_admin: bool
) -> Context:
    return Context(
        platform=PLATFORM,
        user=user,
        channel=channel,
        guild=team,
        is_dm=conversation.is_dm,
        audience=conversation.audience,
        is_admin=is_admin,  # the adapter decides: a user id listed in `admins`
    )


@dataclass(frozen=True, slots=True)
class SlashCommand:
    team: str
    channel: str
    user: str
    text: str
    response_url: str
    trigger_id: str

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> SlashCommand:
        return cls(
            team=str(payload.get("team_id") or ""),
            channel=str(payload.get("channel_id") or ""),
            user=str(payload.get("user_id") or ""),
            text=str(payload.get("text") or "").strip(),
            response_url=str(payload.get("response_url") or ""),
            trigger_id=str(payload.get("trigger_id") or ""),
        )

    @property
    def command(self) -> Command:
        """The command the text names (a bare `/codecite` is help, anything else a question)."""
        return parse(self.text)

    @property
    def question(self) -> str:
        """The question of `ask <q>` or of a bare question; the text otherwise (`map pay`)."""
        command = self.command
        return command.argument if command.spec is ASK else self.text

    def context(self, conversation: Conversation, *, is_admin: bool = False) -> Context:
        return _context(self.user, self.channel, self.team, conversation, is_admin)


@dataclass(frozen=True, slots=True)
class ButtonClick:
    """A click on a button of codecite's (a `block_actions` payload)."""

    team: str
    channel: str
    user: str
    value: str
    response_url: str
    ephemeral: bool  # the button was on a message only the clicker sees

    @classmethod
    def from_payload(cls, body: Mapping[str, Any], action: Mapping[str, Any]) -> ButtonClick:
        container = body.get("container") or {}
        channel = (body.get("channel") or {}).get("id") or container.get("channel_id")
        return cls(
            team=str((body.get("team") or {}).get("id") or ""),
            channel=str(channel or ""),
            user=str((body.get("user") or {}).get("id") or ""),
            value=str(action.get("value") or ""),
            response_url=str(body.get("response_url") or ""),
            ephemeral=container.get("is_ephemeral") is True,
        )

    def context(self, conversation: Conversation, *, is_admin: bool = False) -> Context:
        return _context(self.user, self.channel, self.team, conversation, is_admin)


def parse_event(
    body: Mapping[str, Any], bot: BotIdentity, *, answer_bots: bool = False
) -> Incoming | None:
    """The question in an Events API body, or None when the bot should stay silent."""
    event = body.get("event") or {}
    kind = _kind(event, bot, answer_bots=answer_bots)
    if kind is None:
        return None
    return Incoming(
        kind=kind,
        team=str(body.get("team_id") or event.get("team") or ""),
        channel=str(event.get("channel") or ""),
        user=str(event.get("user") or event.get("bot_id") or ""),
        ts=str(event.get("ts") or ""),
        thread_ts=str(event.get("thread_ts") or ""),
        text=bot.strip_mention(str(event.get("text") or "")),
        event_id=str(body.get("event_id") or ""),
        shared_channel=body.get("is_ext_shared_channel") is True,
        user_team=str(event.get("user_team") or event.get("team") or ""),
    )


def _kind(event: Mapping[str, Any], bot: BotIdentity, *, answer_bots: bool) -> Kind | None:
    if not event.get("channel") or not event.get("ts") or bot.wrote(event):
        return None
    from_bot = bool(event.get("bot_id")) or event.get("subtype") == "bot_message"
    if from_bot and not answer_bots:
        return None
    if event.get("type") == "app_mention":
        return "mention"
    if event.get("type") != "message":
        return None
    subtype = event.get("subtype")
    if subtype not in _MESSAGE_SUBTYPES and not (subtype == "bot_message" and answer_bots):
        return None
    if event.get("channel_type") == "im":
        return "dm"
    text = str(event.get("text") or "")
    mentioned = bool(bot.user_id) and f"<@{bot.user_id}" in text
    thread_ts = event.get("thread_ts")
    if thread_ts and thread_ts != event.get("ts") and not mentioned and not _side_talk(text):
        return "followup"
    return None  # a top-level channel message, or the duplicate of an app_mention


def _side_talk(text: str) -> bool:
    """Thread replies not meant for the bot: "thanks!", a lone emoji, "@alice can you...?"."""
    return bool(_CHATTER.match(text)) or text.lstrip().startswith("<@")
