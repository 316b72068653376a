"""Message edits and deletions for the fake Discord API, and the timeline of what users saw.

`MessageEdits` is mixed into `DiscordFake`. It serves `PATCH`/`DELETE
/channels/{id}/messages/{id}` and the interaction webhook's
`PATCH`/`DELETE /webhooks/{app}/{token}/messages/{id|@original}`, refusing
what Discord refuses: an unknown message (404, 10008), someone else's message
(403, 50005), content over 2,000 characters (400, 50035), an edit that leaves
the message empty (400, 50006), flags other than SUPPRESS_EMBEDS changed on an
edit (400, 50035), a webhook call for an interaction that has no response yet
(404, 10015 Unknown Webhook), `@original` of a component's deferred update, and
any webhook call once the interaction token expired (401, 50027; tokens live
15 minutes, `expire_interactions()` ends them at once).

Every state a bot message takes (posted, edited, deleted) is appended to
`timeline` as a `MessageState` stamped with `time.monotonic()` (the clock of
asyncio's event loop): `states(...)` filters it, `screen(channel, at)` is what
the channel showed at a moment, and `first_text_at(channel, since)` is when
the first bot text appeared: what a bench reads as time to first visible text.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aiohttp import web

from tests.servers.discord_wire import (
    SUPPRESS_EMBEDS,
    DiscordError,
    check_edit,
    now,
    would_ping_everyone,
)

if TYPE_CHECKING:
    from tests.servers.discord_fake import InteractionState

JSON_BODY = web.RequestKey("json_body", object)  # the parsed request body, or None
TOKEN_LIFETIME = 15 * 60.0  # seconds an interaction token accepts webhook calls


@dataclass(frozen=True)
class MessageState:
    """One moment of one bot message as users saw it."""

    at: float  # time.monotonic()
    channel_id: int
    message_id: int
    content: str
    components: list[dict[str, Any]]
    flags: int
    deleted: bool = False
    interaction: str = ""  # the interaction token, for messages of an interaction


class MessageEdits:
    # Provided by DiscordFake.
    messages: dict[int, list[dict[str, Any]]]
    interactions: dict[str, InteractionState]
    bot_user: dict[str, Any]

    def _message(self, channel_id: int, message_id: int) -> dict[str, Any]: ...
    def _webhook(self, app_id: str, token: str) -> InteractionState: ...
    def _interaction_message(
        self, state: InteractionState, body: dict[str, Any], flags: int
    ) -> dict[str, Any]: ...

    timeline: list[MessageState]
    token_lifetime: float = TOKEN_LIFETIME

    # -- timeline -----------------------------------------------------------------------------

    def _show(self, message: dict[str, Any], *, token: str = "", deleted: bool = False) -> None:
        self.timeline.append(
            MessageState(
                at=time.monotonic(),
                channel_id=int(message["channel_id"]),
                message_id=int(message["id"]),
                content="" if deleted else message.get("content", ""),
                components=[] if deleted else list(message.get("components", [])),
                flags=int(message.get("flags", 0)),
                deleted=deleted,
                interaction=token,
            )
        )

    def states(
        self, *, channel_id: int | None = None, message_id: int | None = None
    ) -> list[MessageState]:
        return [
            s
            for s in self.timeline
            if (channel_id is None or s.channel_id == channel_id)
            and (message_id is None or s.message_id == message_id)
        ]

    def screen(self, channel_id: int, at: float) -> list[MessageState]:
        """The bot messages of a channel as they stood at `at`, oldest first."""
        latest: dict[int, MessageState] = {}
        for state in self.states(channel_id=channel_id):
            if state.at <= at:
                latest[state.message_id] = state
        return sorted((s for s in latest.values() if not s.deleted), key=lambda s: s.message_id)

    def first_text_at(self, channel_id: int | None = None, since: float = 0.0) -> float | None:
        """When a bot message first showed text in the channel (any channel: None)."""
        for state in self.timeline:
            if channel_id not in (None, state.channel_id) or state.at < since:
                continue
            if state.content.strip() and not state.deleted:
                return state.at
        return None

    def expire_interactions(self) -> None:
        """Every interaction token so far is past its 15 minutes."""
        for state in self.interactions.values():
            state.created -= self.token_lifetime

    # -- channel messages ---------------------------------------------------------------------

    async def _edit_message(self, request: web.Request, cid: str, mid: str) -> web.Response:
        message = self._message(int(cid), int(mid))
        if message["author"]["id"] != self.bot_user["id"]:
            raise DiscordError(403, 50005, "Cannot edit a message authored by another user")
        _apply_edit(message, _body(request))
        self._show(message)
        return _json(message)

    async def _delete_message(self, request: web.Request, cid: str, mid: str) -> web.Response:
        message = self._message(int(cid), int(mid))
        if message["author"]["id"] != self.bot_user["id"]:
            raise DiscordError(403, 50013, "Missing Permissions")
        self.messages[int(cid)].remove(message)
        self._show(message, deleted=True)
        return web.Response(status=204)

    # -- interaction webhook messages ---------------------------------------------------------

    def _live_webhook(self, app_id: str, token: str) -> InteractionState:
        state = self._webhook(app_id, token)
        if time.monotonic() - state.created > self.token_lifetime:
            raise DiscordError(401, 50027, "Invalid Webhook Token")
        return state

    async def _edit_webhook_message(
        self, request: web.Request, app_id: str, token: str, which: str
    ) -> web.Response:
        state = self._live_webhook(app_id, token)
        body = _body(request)
        if which == "@original" and state.original_pending:
            check_edit(body, {"content": "", "components": [], "flags": 0})
            # Editing the deferred response fills the "thinking" message.
            flags = EPHEMERAL_FLAG if state.deferred_ephemeral else 0
            message = self._interaction_message(state, body, flags)
            state.original_pending = False
            state.original_id = message["id"]
            state.messages.append(message)
            self._show(message, token=token)
            return _json(message)
        message = _webhook_message(state, which)
        _apply_edit(message, body)
        self._show(message, token=token)
        return _json(message)

    async def _delete_webhook_message(
        self, request: web.Request, app_id: str, token: str, which: str
    ) -> web.Response:
        state = self._live_webhook(app_id, token)
        if which == "@original" and state.original_pending:
            state.original_pending = False  # the "thinking" message goes away
            return web.Response(status=204)
        message = _webhook_message(state, which)
        state.messages.remove(message)
        self._show(message, token=token, deleted=True)
        return web.Response(status=204)


EPHEMERAL_FLAG = 64


def _webhook_message(state: InteractionState, which: str) -> dict[str, Any]:
    if which == "@original":
        if state.type == 3 and state.response_type == 6:
            raise DiscordError(400, 50035, "Invalid Form Body")  # no response message of its own
        which = state.original_id or ""
    for message in state.messages:
        if message["id"] == which:
            return message
    raise DiscordError(404, 10008, "Unknown Message")


def _apply_edit(message: dict[str, Any], body: dict[str, Any]) -> None:
    check_edit(body, message)
    if "flags" in body and (body["flags"] ^ message.get("flags", 0)) & ~SUPPRESS_EMBEDS:
        raise DiscordError(
            400,
            50035,
            "Invalid Form Body",
            {"flags": {"_errors": [{"code": "INVALID", "message": "only SUPPRESS_EMBEDS"}]}},
        )
    for key in ("content", "components", "flags", "embeds"):
        if key in body:
            message[key] = body[key] if body[key] is not None else ([] if key != "content" else "")
    message["edited_timestamp"] = now()
    message["mention_everyone"] = would_ping_everyone({**body, "content": message["content"]})


def _body(request: web.Request) -> dict[str, Any]:
    body = request[JSON_BODY]
    return body if isinstance(body, dict) else {}


def _json(payload: Any) -> web.Response:
    return web.Response(
        status=200, body=json.dumps(payload).encode(), headers={"Content-Type": "application/json"}
    )
