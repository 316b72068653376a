"""A strict local Discord REST API (v10) for tests, on aiohttp in the test's event loop.

Serves what codecite's discord.py client calls: login (`/users/@me`,
`/oauth2/applications/@me`), command registration, channel messages (posted,
edited, deleted), typing, reactions, threads from messages, history,
interaction callbacks, follow-up webhooks and edits of `@original`
(`discord_edits`). Keeps channels, messages and interactions in memory,
records every request, and refuses what Discord refuses: 401 without
`Authorization: Bot <token>` on bot routes, 400 for content over 2,000
characters, empty messages, bad flags, bad components or allowed_mentions,
a second response to one interaction, follow-ups before a response, unknown
channels/messages (404), command sync for a guild the bot is not in (403).
Replies carry `Content-Type: application/json` exactly, as discord.py expects.

Rate limits: `limits` (`discord_limits.RateLimits`) keeps Discord's per-route
buckets (message sends and edits per channel, interaction webhook calls per
token) and answers with `X-RateLimit-*` headers, or 429 past a bucket; every
refusal is in `limits.exceeded`. Pass `RateLimits(())` for none.

What users saw: `timeline` holds every state of every bot message with its
`time.monotonic()` stamp; `states()`, `screen(channel, at)` and
`first_text_at(channel, since)` read it (see `discord_edits`). Requests carry
`at` too, for counting calls per answer.

Fault knobs apply to the next matching requests in arrival order, before the
route runs: `fail_next(status, count, retry_after, method_or_path, is_global)`
answers with an HTTP error (429 as Discord sends it: a JSON body with
`retry_after` and `global`, `Retry-After`, `X-RateLimit-Scope` and the `Via`
header without which discord.py takes a 429 for a Cloudflare ban; 5xx with
Discord's JSON error body), `drop_next(count, method_or_path, processed=False)`
closes the connection without answering (with `processed`, after the request
took effect: the response is what gets lost). `method_or_path` is a regex for
the path without `/api/v10`, optionally after a method:
`"POST /channels/\\d+/messages"`. Faulted requests are recorded with their
status (-1 for a dropped connection). Channel messages honour `nonce` with
`enforce_nonce` as Discord does: a repeated nonce returns the message it
already created instead of posting another.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.servers.discord_edits import JSON_BODY, MessageEdits, MessageState
from tests.servers.discord_files import FILES, multipart_message
from tests.servers.discord_limits import RateLimits, too_many
from tests.servers.discord_wire import (
    COMMAND_NAME,
    EPHEMERAL,
    SUPPRESS_EMBEDS,
    SUPPRESS_NOTIFICATIONS,
    DiscordError,
    check_message,
    invalid,
    now,
    thread_payload,
    user_payload,
    would_ping_everyone,
)

TOKEN = "test-bot-token"
BOT_ID = 1_100_000_000_000_000_001
APP_ID = 1_100_000_000_000_000_002
OWNER_ID = 1_100_000_000_000_000_003
API = "/api/v10"
__all__ = ["DiscordFake", "InteractionState", "MessageState", "Recorded"]


@dataclass
class Recorded:
    method: str
    path: str  # without the /api/v10 prefix
    query: dict[str, str]
    authorization: str
    body: Any
    status: int = 0
    at: float = field(default_factory=time.monotonic)  # arrival


@dataclass(frozen=True)
class _Fault:
    kind: str  # "fail" or "drop"
    status: int = 0
    retry_after: float | None = None
    is_global: bool = False
    processed: bool = False  # a drop after the request took effect
    method: str | None = None  # None = any method
    pattern: re.Pattern[str] | None = None  # None = any path

    def matches(self, method: str, path: str) -> bool:
        if self.method is not None and self.method != method:
            return False
        return self.pattern is None or self.pattern.fullmatch(path) is not None


def _target(method_or_path: str | None) -> tuple[str | None, re.Pattern[str] | None]:
    if method_or_path is None:
        return None, None
    verb, _, rest = method_or_path.partition(" ")
    if rest and verb.isupper():
        return verb, re.compile(rest)
    return None, re.compile(method_or_path)


@dataclass
class InteractionState:
    id: int
    token: str
    type: int  # 2 application command, 3 component
    channel_id: int
    guild_id: int | None
    response_type: int = 0  # 0 = not yet responded
    deferred_ephemeral: bool = False
    original_pending: bool = False  # deferred and not yet filled by a follow-up
    original_id: str | None = None  # the response message, once there is one
    created: float = field(default_factory=time.monotonic)  # the token's 15 minutes start
    messages: list[dict[str, Any]] = field(default_factory=list)  # what the user saw


class DiscordFake(MessageEdits):
    def __init__(self, *, token: str = TOKEN, limits: RateLimits | None = None) -> None:
        self.token = token
        self.bot_user = user_payload(BOT_ID, "codecite", bot=True)
        self.requests: list[Recorded] = []
        self.guilds: set[int] = set()
        self.channels: dict[int, dict[str, Any]] = {}
        self.messages: dict[int, list[dict[str, Any]]] = {}
        self.uploads: dict[str, bytes] = {}  # attachment id -> the bytes sent with a message
        self.commands: dict[str, list[dict[str, Any]]] = {}
        self.interactions: dict[str, InteractionState] = {}
        self._ids = itertools.count(1_200_000_000_000_000_000)
        self._faults: list[_Fault] = []
        self.limits = limits if limits is not None else RateLimits()  # Discord's route buckets
        self.timeline: list[MessageState] = []  # every state of every bot message
        self._changed = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self.origin = ""

    # -- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> str:
        app = web.Application(middlewares=[self._middleware])
        app.router.add_route("*", API + "/{tail:.*}", self._route)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.origin = f"http://127.0.0.1:{port}"
        return self.base_url

    @property
    def base_url(self) -> str:
        return self.origin + API

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def wait_for(self, probe: Callable[[], Any], timeout: float = 15.0) -> Any:
        """Wait until `probe()` is truthy (re-checked after every request); returns its value."""
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(probe), timeout)
        return probe()

    # -- fault knobs --------------------------------------------------------------------------

    def fail_next(
        self,
        status: int,
        count: int = 1,
        retry_after: float | None = None,
        method_or_path: str | None = None,
        *,
        is_global: bool = False,
    ) -> None:
        """Answer the next `count` matching requests with HTTP `status` instead of running them."""
        if status < 400:
            raise ValueError("a failure needs an error status")
        method, pattern = _target(method_or_path)
        fault = _Fault("fail", status, retry_after, is_global, method=method, pattern=pattern)
        self._faults.extend([fault] * count)

    def drop_next(
        self, count: int = 1, method_or_path: str | None = None, *, processed: bool = False
    ) -> None:
        """Close the connection of the next `count` matching requests without an answer."""
        method, pattern = _target(method_or_path)
        fault = _Fault("drop", processed=processed, method=method, pattern=pattern)
        self._faults.extend([fault] * count)

    def _take_fault(self, method: str, path: str) -> _Fault | None:
        for i, fault in enumerate(self._faults):
            if fault.matches(method, path):
                del self._faults[i]
                return fault
        return None

    # -- seeding ------------------------------------------------------------------------------

    def next_id(self) -> int:
        return next(self._ids)

    def add_guild(self, guild_id: int) -> None:
        self.guilds.add(guild_id)

    def add_channel(self, payload: dict[str, Any]) -> dict[str, Any]:
        self.channels[int(payload["id"])] = payload
        self.messages.setdefault(int(payload["id"]), [])
        return payload

    def add_message(self, payload: dict[str, Any]) -> dict[str, Any]:
        """A message someone posted (the test also delivers it over the 'gateway')."""
        self._channel(int(payload["channel_id"]))
        self.messages[int(payload["channel_id"])].append(payload)
        return payload

    def add_interaction(self, payload: dict[str, Any]) -> InteractionState:
        state = InteractionState(
            id=int(payload["id"]),
            token=payload["token"],
            type=payload["type"],
            channel_id=int(payload["channel_id"]),
            guild_id=int(payload["guild_id"]) if payload.get("guild_id") else None,
        )
        self.interactions[state.token] = state
        return state

    # -- queries for assertions ---------------------------------------------------------------

    def calls(self, method: str, pattern: str) -> list[Recorded]:
        """Successful requests whose path matches the regex `pattern` in full."""
        rx = re.compile(pattern)
        return [
            r
            for r in self.requests
            if r.method == method and rx.fullmatch(r.path) and 200 <= r.status < 300
        ]

    def bot_messages(self, channel_id: int) -> list[dict[str, Any]]:
        return [m for m in self.messages.get(channel_id, []) if m["author"]["id"] == str(BOT_ID)]

    def message_bodies(self) -> list[Any]:
        """Every request body that carried a message (channel sends, callbacks, follow-ups)."""
        kinds = ("POST", "PATCH")
        paths = re.compile(r"/channels/\d+/messages(/\d+)?|/webhooks/\d+/[^/]+(/messages/.+)?")
        out = [r.body for r in self.requests if r.method in kinds and paths.fullmatch(r.path)]
        for r in self.requests:
            if r.path.endswith("/callback") and r.body.get("type") in (4, 7):  # with a message
                out.append(r.body["data"])
        return out

    # -- plumbing -----------------------------------------------------------------------------

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Any) -> web.StreamResponse:
        raw = await request.read()
        body: Any = None
        if raw:
            kind = request.headers.get("Content-Type", "").split(";")[0]
            if kind == "multipart/form-data":  # a message with files (payload_json + files[n])
                try:
                    body = multipart_message(request.headers["Content-Type"], raw)
                except DiscordError as exc:
                    reply = _reply(exc.status, {"message": exc.message, "code": exc.code})
                    return await self._finish(request, None, reply)
            elif kind != "application/json":
                return await self._finish(request, None, _reply(400, _error(50109, "Bad JSON")))
            else:
                body = json.loads(raw)
        request[JSON_BODY] = body
        fault = self._take_fault(request.method, request.path.removeprefix(API))
        if fault is not None and fault.kind == "fail":
            return await self._finish(request, body, _fault_reply(fault))
        if fault is not None and not fault.processed:
            return await self._drop(request, body)
        verdict = self.limits.take(request.method, request.path.removeprefix(API))
        if verdict is not None and verdict.refused:
            return await self._finish(request, body, too_many(verdict))
        try:
            response = await handler(request)
        except DiscordError as exc:
            payload = {"message": exc.message, "code": exc.code}
            if exc.errors is not None:
                payload["errors"] = exc.errors
            response = _reply(exc.status, payload)
        if fault is not None:  # it took effect; the answer is lost on the way
            return await self._drop(request, body)
        if verdict is not None:
            response.headers.update(verdict.headers)
        return await self._finish(request, body, response)

    async def _drop(self, request: web.Request, body: Any) -> web.Response:
        await self._record(request, body, -1)
        request.transport.close()  # type: ignore[union-attr]
        return web.Response(status=204)  # never reaches the client

    async def _finish(
        self, request: web.Request, body: Any, response: web.Response
    ) -> web.Response:
        await self._record(request, body, response.status)
        return response

    async def _record(self, request: web.Request, body: Any, status: int) -> None:
        path = request.path.removeprefix(API)
        auth = request.headers.get("Authorization", "")
        self.requests.append(
            Recorded(request.method, path, dict(request.query), auth, body, status)
        )
        async with self._changed:
            self._changed.notify_all()

    async def _route(self, request: web.Request) -> web.Response:
        path = request.path.removeprefix(API)
        for method, rx, handler, bot_auth in self._table():
            match = rx.fullmatch(path)
            if match and method == request.method:
                if bot_auth and request.headers.get("Authorization") != f"Bot {self.token}":
                    raise DiscordError(401, 0, "401: Unauthorized")
                return await handler(request, *match.groups())
        raise DiscordError(404, 0, "404: Not Found")

    def _table(self) -> list[tuple[str, re.Pattern[str], Any, bool]]:
        rows = [
            ("GET", r"/users/@me", self._me, True),
            ("GET", r"/oauth2/applications/@me", self._application, True),
            ("PUT", r"/applications/(\d+)/commands", self._put_commands, True),
            ("PUT", r"/applications/(\d+)/guilds/(\d+)/commands", self._put_commands, True),
            ("GET", r"/channels/(\d+)", self._get_channel, True),
            ("GET", r"/channels/(\d+)/messages", self._history, True),
            ("GET", r"/channels/(\d+)/messages/(\d+)", self._get_message, True),
            ("POST", r"/channels/(\d+)/messages", self._create_message, True),
            ("PATCH", r"/channels/(\d+)/messages/(\d+)", self._edit_message, True),
            ("DELETE", r"/channels/(\d+)/messages/(\d+)", self._delete_message, True),
            ("POST", r"/channels/(\d+)/typing", self._typing, True),
            ("PUT", r"/channels/(\d+)/messages/(\d+)/reactions/([^/]+)/@me", self._react, True),
            ("POST", r"/channels/(\d+)/messages/(\d+)/threads", self._thread, True),
            ("POST", r"/interactions/(\d+)/([^/]+)/callback", self._callback, False),
            ("POST", r"/webhooks/(\d+)/([^/]+)", self._followup, False),
            (
                "PATCH",
                r"/webhooks/(\d+)/([^/]+)/messages/([^/]+)",
                self._edit_webhook_message,
                False,
            ),
            (
                "DELETE",
                r"/webhooks/(\d+)/([^/]+)/messages/([^/]+)",
                self._delete_webhook_message,
                False,
            ),
        ]
        return [(m, re.compile(p), h, a) for m, p, h, a in rows]

    # -- login and commands -------------------------------------------------------------------

    async def _me(self, request: web.Request) -> web.Response:
        return _reply(200, self.bot_user)

    async def _application(self, request: web.Request) -> web.Response:
        app = {
            "id": str(APP_ID),
            "name": "codecite",
            "description": "",
            "icon": None,
            "bot_public": True,
            "bot_require_code_grant": False,
            "owner": user_payload(OWNER_ID, "owner"),
            "verify_key": "0" * 64,
            "flags": 0,
            "bot": self.bot_user,
        }
        return _reply(200, app)

    async def _put_commands(
        self, request: web.Request, app_id: str, guild_id: str | None = None
    ) -> web.Response:
        if int(app_id) != APP_ID:
            raise DiscordError(403, 50001, "Missing Access")
        if guild_id is not None and int(guild_id) not in self.guilds:
            raise DiscordError(403, 50001, "Missing Access")
        commands = request[JSON_BODY]
        if not isinstance(commands, list) or len(commands) > 100:
            raise invalid("_root", "a list of at most 100 commands")
        registered = [self._command(c, guild_id) for c in commands]
        names = [c["name"] for c in registered]
        if len(set(names)) != len(names):
            raise invalid("_root", "command names must be unique")
        self.commands["global" if guild_id is None else f"guild:{guild_id}"] = registered
        return _reply(200, registered)

    def _command(self, data: dict[str, Any], guild_id: str | None) -> dict[str, Any]:
        name = data.get("name", "")
        if not COMMAND_NAME.fullmatch(name) or name != name.lower():
            raise invalid("name", f"invalid command name {name!r}")
        if not 1 <= len(data.get("description", "")) <= 100:
            raise invalid("description", "1 to 100 characters")
        seen_optional = False
        for option in data.get("options", []):
            if not COMMAND_NAME.fullmatch(option.get("name", "")):
                raise invalid("options", "invalid option name")
            if not 1 <= len(option.get("description", "")) <= 100:
                raise invalid("options", "option description 1 to 100 characters")
            if option.get("required") and seen_optional:
                raise invalid("options", "required options must come first")
            seen_optional = seen_optional or not option.get("required")
        out = {"type": 1, **data, "id": str(self.next_id()), "application_id": str(APP_ID)}
        out["version"] = str(self.next_id())
        if guild_id is not None:
            out["guild_id"] = guild_id
        return out

    # -- channels -----------------------------------------------------------------------------

    def _channel(self, channel_id: int) -> dict[str, Any]:
        channel = self.channels.get(channel_id)
        if channel is None:
            raise DiscordError(404, 10003, "Unknown Channel")
        return channel

    def _message(self, channel_id: int, message_id: int) -> dict[str, Any]:
        self._channel(channel_id)
        for message in self.messages[channel_id]:
            if int(message["id"]) == message_id:
                return message
        raise DiscordError(404, 10008, "Unknown Message")

    async def _get_channel(self, request: web.Request, cid: str) -> web.Response:
        return _reply(200, self._channel(int(cid)))

    async def _get_message(self, request: web.Request, cid: str, mid: str) -> web.Response:
        return _reply(200, self._message(int(cid), int(mid)))

    async def _history(self, request: web.Request, cid: str) -> web.Response:
        self._channel(int(cid))
        limit = int(request.query.get("limit", "50"))
        if not 1 <= limit <= 100:
            raise invalid("limit", "1 to 100")
        found = self.messages[int(cid)]
        if "before" in request.query:
            found = [m for m in found if int(m["id"]) < int(request.query["before"])]
        if "after" in request.query:
            found = [m for m in found if int(m["id"]) > int(request.query["after"])]
        newest_first = sorted(found, key=lambda m: int(m["id"]), reverse=True)
        return _reply(200, newest_first[:limit])

    async def _create_message(self, request: web.Request, cid: str) -> web.Response:
        channel = self._channel(int(cid))
        body = request[JSON_BODY] or {}
        check_message(body, allowed_flags=SUPPRESS_EMBEDS | SUPPRESS_NOTIFICATIONS)
        reference = body.get("message_reference")
        referenced = None
        if reference is not None:
            try:
                referenced = self._message(int(cid), int(reference["message_id"]))
            except DiscordError:
                if reference.get("fail_if_not_exists", True):
                    raise invalid("message_reference", "Unknown message") from None
        nonce = _nonce(body)
        if nonce and body.get("enforce_nonce"):
            for earlier in self.bot_messages(int(cid)):
                if earlier.get("nonce") == nonce:
                    return _reply(200, earlier)  # a repeated send: Discord returns the first one
        message = self._new_message(channel, body, referenced)
        if nonce:
            message["nonce"] = nonce
        self.messages[int(cid)].append(message)
        self._show(message)
        return _reply(200, message)

    def _attachment(self, file: dict[str, Any]) -> dict[str, Any]:
        """A file sent with a message as Discord returns it; its bytes kept in `uploads`."""
        at = str(self.next_id())
        self.uploads[at] = file["data"]
        url = f"https://cdn.discordapp.com/attachments/{at}/{file['filename']}"
        keys = ("filename", "content_type", "size")
        proxy = url.replace("cdn.discordapp.com", "media.discordapp.net")
        return {"id": at, **{k: file[k] for k in keys}, "url": url, "proxy_url": proxy}

    def _new_message(
        self, channel: dict[str, Any], body: dict[str, Any], referenced: dict[str, Any] | None
    ) -> dict[str, Any]:
        message: dict[str, Any] = {
            "id": str(self.next_id()),
            "channel_id": channel["id"],
            "author": self.bot_user,
            "content": body.get("content", ""),
            "timestamp": now(),
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": would_ping_everyone(body),
            "mentions": [],
            "mention_roles": [],
            "attachments": [self._attachment(f) for f in body.get(FILES, [])],
            "embeds": [],
            "pinned": False,
            "type": 0 if referenced is None else 19,
            "flags": body.get("flags", 0),
            "components": body.get("components", []),
        }
        if "guild_id" in channel:
            message["guild_id"] = channel["guild_id"]
        if referenced is not None:
            message["message_reference"] = {
                "message_id": referenced["id"],
                "channel_id": channel["id"],
            }
            message["referenced_message"] = referenced
        return message

    async def _typing(self, request: web.Request, cid: str) -> web.Response:
        self._channel(int(cid))
        return web.Response(status=204)

    async def _react(self, request: web.Request, cid: str, mid: str, emoji: str) -> web.Response:
        self._message(int(cid), int(mid))
        return web.Response(status=204)

    async def _thread(self, request: web.Request, cid: str, mid: str) -> web.Response:
        channel = self._channel(int(cid))
        self._message(int(cid), int(mid))
        if channel["type"] not in (0, 5):
            raise DiscordError(400, 50024, "Cannot execute action on this channel type")
        if int(mid) in self.channels:
            raise DiscordError(400, 160004, "A thread has already been created for this message")
        body = request[JSON_BODY] or {}
        if not 1 <= len(body.get("name", "")) <= 100:
            raise invalid("name", "1 to 100 characters")
        if body.get("auto_archive_duration", 4320) not in (60, 1440, 4320, 10080):
            raise invalid("auto_archive_duration", "60, 1440, 4320 or 10080")
        thread = thread_payload(
            int(mid), int(channel["guild_id"]), int(cid), owner_id=BOT_ID, name=body["name"]
        )
        return _reply(201, self.add_channel(thread))

    # -- interactions -------------------------------------------------------------------------

    def _interaction(self, token: str) -> InteractionState:
        state = self.interactions.get(token)
        if state is None:
            raise DiscordError(404, 10062, "Unknown interaction")
        return state

    async def _callback(self, request: web.Request, iid: str, token: str) -> web.Response:
        state = self._interaction(token)
        if state.id != int(iid):
            raise DiscordError(404, 10062, "Unknown interaction")
        if state.response_type:
            raise DiscordError(400, 40060, "Interaction has already been acknowledged.")
        body = request[JSON_BODY] or {}
        kind = body.get("type")
        valid = {2: (4, 5, 9), 3: (4, 5, 6, 7, 9)}[state.type]
        if kind not in valid:
            raise invalid("type", f"callback type {kind} is not valid here")
        data = body.get("data") or {}
        state.response_type = kind
        if kind == 5:
            state.deferred_ephemeral = bool(data.get("flags", 0) & EPHEMERAL)
            state.original_pending = True
        if kind == 4:
            check_message(data, allowed_flags=EPHEMERAL | SUPPRESS_EMBEDS | SUPPRESS_NOTIFICATIONS)
            state.messages.append(self._interaction_message(state, data, data.get("flags", 0)))
            state.original_id = state.messages[-1]["id"]
            self._show(state.messages[-1], token=token)
        if request.query.get("with_response") not in ("1", "true", "True"):
            return web.Response(status=204)
        return _reply(200, self._callback_resource(state, kind, data))

    def _callback_resource(
        self, state: InteractionState, kind: int, data: dict[str, Any]
    ) -> dict[str, Any]:
        ephemeral = bool(data.get("flags", 0) & EPHEMERAL)
        resource: dict[str, Any] = {"type": kind}
        info: dict[str, Any] = {"id": str(state.id), "type": state.type}
        if kind in (4, 5):
            info["response_message_loading"] = kind == 5
            info["response_message_ephemeral"] = ephemeral
        if kind == 4:
            info["response_message_id"] = state.messages[-1]["id"]
            resource["message"] = state.messages[-1]
        return {"interaction": info, "resource": resource}

    def _interaction_message(
        self, state: InteractionState, body: dict[str, Any], flags: int
    ) -> dict[str, Any]:
        channel = self.channels.get(state.channel_id, {"id": str(state.channel_id)})
        message = self._new_message(channel, body, None)
        message.update(flags=flags, webhook_id=str(APP_ID), application_id=str(APP_ID))
        return message

    async def _followup(self, request: web.Request, app_id: str, token: str) -> web.Response:
        state = self._live_webhook(app_id, token)
        body = request[JSON_BODY] or {}
        check_message(body, allowed_flags=EPHEMERAL | SUPPRESS_EMBEDS | SUPPRESS_NOTIFICATIONS)
        flags = body.get("flags", 0)
        if state.original_pending:
            # The first follow-up fills the "thinking" message and keeps its visibility.
            state.original_pending = False
            flags = (flags & ~EPHEMERAL) | (EPHEMERAL if state.deferred_ephemeral else 0)
        message = self._interaction_message(state, body, flags)
        if state.original_id is None:
            state.original_id = message["id"]
        state.messages.append(message)
        self._show(message, token=token)
        return _reply(200, message)

    def _webhook(self, app_id: str, token: str) -> InteractionState:
        state = self.interactions.get(token)
        if int(app_id) != APP_ID or state is None or not state.response_type:
            raise DiscordError(404, 10015, "Unknown Webhook")
        return state


def _reply(status: int, payload: Any) -> web.Response:
    body = json.dumps(payload).encode()
    return web.Response(status=status, body=body, headers={"Content-Type": "application/json"})


def _error(code: int, message: str) -> dict[str, Any]:
    return {"message": message, "code": code}


def _nonce(body: dict[str, Any]) -> str:
    nonce = body.get("nonce")
    if nonce is None:
        return ""
    if isinstance(nonce, bool) or not isinstance(nonce, str | int) or len(str(nonce)) > 25:
        raise invalid("nonce", "an integer or a string of at most 25 characters")
    return str(nonce)


def _fault_reply(fault: _Fault) -> web.Response:
    headers = {"Content-Type": "application/json"}
    if fault.status != 429:
        payload = _error(0, f"{fault.status}: Server Error")
        if fault.retry_after is not None:
            headers["Retry-After"] = str(math.ceil(fault.retry_after))
        return web.Response(status=fault.status, body=json.dumps(payload).encode(), headers=headers)
    retry_after = 1.0 if fault.retry_after is None else fault.retry_after
    headers["Retry-After"] = str(math.ceil(retry_after))
    headers["X-RateLimit-Scope"] = "global" if fault.is_global else "user"
    if fault.is_global:
        headers["X-RateLimit-Global"] = "true"
    headers["Via"] = "1.1 google"  # Discord's own 429s come through its proxy
    payload = {
        "message": "You are being rate limited.",
        "retry_after": retry_after,
        "global": fault.is_global,
    }
    return web.Response(status=429, body=json.dumps(payload).encode(), headers=headers)
