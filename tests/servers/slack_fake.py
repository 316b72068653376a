"""A strict local Slack Web API (and response_url endpoint) for tests.

Speaks the wire format the slack_sdk WebClient uses (`POST /api/<method>` with a
JSON or form body, `GET` with query parameters for a few reads), keeps
channels, messages and reactions in memory, records every call, and refuses
what real Slack refuses: a missing or wrong token, unknown methods, more than
50 blocks, section text over 3,000 characters, text over 40,000, replies to a
thread that does not exist, reactions on unknown messages. `reject_blocks`
makes every message with blocks fail with `invalid_blocks`.

`conversations.info` knows the conversations registered with
`add_conversation` (public or private channel, im, mpim, shared with another
organisation or not) and those someone posted in with `add_message` (then the
kind the id's prefix suggests: C public, G private, D im). Anything else is
`channel_not_found`, as are private conversations the bot is not in
(`not_member`); `missing_scopes` makes the lookups that need a scope fail with
`missing_scope` and the `needed` scope, as for an app installed before it asked.

Fault knobs apply to the next matching requests in arrival order:
`fail_next(status, count, retry_after, method_or_path)` answers with an HTTP
error before the method runs (429 carries `Retry-After` in whole seconds and
`{"ok": false, "error": "ratelimited"}`, as Slack sends it; 5xx an HTML page,
as its edge does), `drop_next(count, method_or_path)` closes the connection
without answering. `method_or_path` narrows a fault to one API method
(`chat.postMessage`) or a path prefix (`/response/`); other requests pass it
by. Faulted requests are recorded in `calls` with `ok=False` and their
`status` (-1 for a dropped connection).

The chat streaming methods and `views` (what each bot message showed after
each change, for tests and the bench) live in `slack_stream_fake`; the message
rules shared with them in `slack_checks`.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import ModuleType
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

from tests.servers.slack_checks import (
    APP_TOKEN,
    BOT_ID,
    BOT_TOKEN,
    BOT_USER_ID,
    MAX_BLOCKS,
    MAX_SECTION_TEXT,
    MAX_TEXT,
    RESPONSE_URL_USES,
    TEAM_ID,
    SlackError,
    check_message,
)
from tests.servers.slack_files_fake import FILES_METHODS, Upload, receive
from tests.servers.slack_stream_fake import STREAM_METHODS, View, record_view

__all__ = [
    "APP_TOKEN",
    "BOT_ID",
    "BOT_TOKEN",
    "BOT_USER_ID",
    "MAX_BLOCKS",
    "MAX_SECTION_TEXT",
    "MAX_TEXT",
    "TEAM_ID",
    "Call",
    "FakeSlack",
    "SlackError",
]

T = TypeVar("T")


@dataclass
class Call:
    method: str
    params: dict[str, Any]
    token: str
    at: float = field(default_factory=time.monotonic)
    ok: bool = True
    error: str = ""
    status: int = 200  # HTTP status answered; -1 when the connection was dropped


@dataclass(frozen=True)
class _Fault:
    kind: str  # "fail" or "drop"
    status: int = 0
    retry_after: float | None = None
    target: str | None = None  # an API method name or a path prefix; None = any request

    def matches(self, method: str, path: str) -> bool:
        return self.target is None or self.target == method or path.startswith(self.target)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # benchmarks burst many connections at once


class FakeSlack:
    """Start with `with FakeSlack() as slack:`; point WebClient at `slack.base_url`."""

    def __init__(self, *, bot_token: str = BOT_TOKEN, app_token: str = APP_TOKEN) -> None:
        self.bot_token = bot_token
        self.app_token = app_token
        self.reject_blocks = False
        self.socket_url = ""  # what apps.connections.open hands out
        self.calls: list[Call] = []
        self.ephemerals: list[dict[str, Any]] = []
        self.messages: dict[str, list[dict[str, Any]]] = {}
        self.not_member: set[str] = set()
        self.conversations: dict[str, dict[str, Any]] = {}
        self.missing_scopes: set[str] = set()
        self.refuse_streaming = ""  # an error code every chat.*Stream call fails with
        self.views: list[View] = []  # what each bot message showed after each change
        self.pending_uploads: dict[str, Upload] = {}  # file id -> upload (files_upload_v2)
        self.uploads: list[Upload] = []  # files shared in a conversation, in order
        self._response_urls: dict[str, int] = {}  # id -> uses left
        self._faults: list[_Fault] = []
        self._ts = itertools.count(1)
        self._cond = threading.Condition()
        self._server = _Server(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    # -- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> FakeSlack:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}"

    @property
    def base_url(self) -> str:
        return f"{self.origin}/api/"

    # -- test helpers ------------------------------------------------------------------------

    def next_ts(self) -> str:
        return f"{1_700_000_000 + next(self._ts)}.{next(self._ts):06d}"

    def add_message(
        self,
        channel: str,
        user: str,
        text: str,
        *,
        thread_ts: str | None = None,
        bot_id: str | None = None,
        ts: str | None = None,
    ) -> dict[str, Any]:
        """A message someone posted (what Slack would store before sending the event)."""
        with self._cond:
            if channel not in self.conversations and channel[:1] in _PREFIX_KINDS:
                kind = _PREFIX_KINDS[channel[:1]]
                self.conversations[channel] = _conversation_object(channel, kind, False)
            msg: dict[str, Any] = {"type": "message", "user": user, "text": text}
            msg["ts"] = ts or self.next_ts()
            if thread_ts:
                self._require_parent(channel, thread_ts)
                msg["thread_ts"] = thread_ts
            if bot_id:
                msg["bot_id"] = bot_id
            self.messages.setdefault(channel, []).append(msg)
            self._cond.notify_all()
            return dict(msg)

    def add_conversation(
        self, channel: str, kind: str = "public", *, ext_shared: bool = False
    ) -> dict[str, Any]:
        """Register a conversation: kind is public, private, im or mpim."""
        with self._cond:
            self.conversations[channel] = _conversation_object(channel, kind, ext_shared)
            self.messages.setdefault(channel, [])
            return dict(self.conversations[channel])

    def new_response_url(self) -> str:
        with self._cond:
            rid = f"R{next(self._ts)}"
            self._response_urls[rid] = RESPONSE_URL_USES
        return f"{self.origin}/response/{rid}"

    def views_of(self, ts: str) -> list[View]:
        """What the bot message `ts` showed after each change, oldest first."""
        with self._cond:
            return [v for v in self.views if v.ts == ts]

    def calls_to(self, method: str) -> list[Call]:
        with self._cond:
            return [c for c in self.calls if c.method == method and c.ok]

    def bot_posts(self, channel: str) -> list[dict[str, Any]]:
        with self._cond:
            return [m for m in self.messages.get(channel, []) if m.get("bot_id") == BOT_ID]

    def wait_for(self, probe: Callable[[], T | None], timeout: float = 15.0) -> T:
        """Block until `probe()` returns something truthy (re-checked on every API call)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                value = probe()
                if value:
                    return value
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"timed out; calls: {[c.method for c in self.calls]}")
                self._cond.wait(remaining)

    # -- fault knobs -------------------------------------------------------------------------

    def fail_next(
        self,
        status: int,
        count: int = 1,
        retry_after: float | None = None,
        method_or_path: str | None = None,
    ) -> None:
        """Answer the next `count` matching requests with HTTP `status` instead of running them."""
        if status < 400:
            raise ValueError("a failure needs an error status")
        with self._cond:
            self._faults.extend([_Fault("fail", status, retry_after, method_or_path)] * count)

    def drop_next(self, count: int = 1, method_or_path: str | None = None) -> None:
        """Close the connection of the next `count` matching requests without an answer."""
        with self._cond:
            self._faults.extend([_Fault("drop", target=method_or_path)] * count)

    def take_fault(self, method: str, path: str, params: dict[str, Any]) -> _Fault | None:
        """The first pending fault for this request (recorded as a failed call), or None."""
        with self._cond:
            for i, fault in enumerate(self._faults):
                if fault.matches(method, path):
                    del self._faults[i]
                    break
            else:
                return None
            status = -1 if fault.kind == "drop" else fault.status
            error = "dropped" if fault.kind == "drop" else f"http_{status}"
            self.calls.append(Call(method, params, "", ok=False, error=error, status=status))
            self._cond.notify_all()
            return fault

    # -- dispatch ----------------------------------------------------------------------------

    def handle(self, method: str, params: dict[str, Any], token: str) -> dict[str, Any]:
        with self._cond:
            call = Call(method, params, token)
            self.calls.append(call)
            try:
                result = self._dispatch(method, params, token)
            except SlackError as exc:
                call.ok, call.error = False, exc.code
                result = {"ok": False, "error": exc.code, **exc.extra}
            self._cond.notify_all()
            return result

    def _dispatch(self, method: str, params: dict[str, Any], token: str) -> dict[str, Any]:
        if method == "apps.connections.open":
            self._auth(token, self.app_token)
            if not self.socket_url:
                raise SlackError("internal_error")
            return {"ok": True, "url": self.socket_url}
        handler = _METHODS.get(method) or _pane().METHODS.get(method)
        if handler is None:
            raise SlackError("unknown_method")
        self._auth(token, self.bot_token)
        return {"ok": True, **handler(self, params)}

    def respond(self, rid: str, body: dict[str, Any]) -> tuple[int, str]:
        """The response_url endpoint: limited uses, same message limits as chat.postMessage."""
        with self._cond:
            call = Call(f"response_url:{rid}", body, "")
            self.calls.append(call)
            status, text = 200, "ok"
            if self._response_urls.get(rid, 0) <= 0:
                status, text = 404, "used_url" if rid in self._response_urls else "no_such_url"
            else:
                try:
                    check_message(body)
                    if body.get("response_type", "ephemeral") not in ("ephemeral", "in_channel"):
                        raise SlackError("invalid_response_type")
                    if not isinstance(body.get("replace_original", False), bool):
                        raise SlackError("invalid_replace_original")  # "true" is refused
                    self._response_urls[rid] -= 1
                except SlackError as exc:
                    status, text = 400, exc.code
            call.ok, call.error = status == 200, "" if status == 200 else text
            self._cond.notify_all()
            return status, text

    def _auth(self, token: str, expected: str) -> None:
        if not token:
            raise SlackError("not_authed")
        if token != expected:
            raise SlackError("invalid_auth")

    def _channel(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        channel = str(params.get("channel") or "")
        if not channel or channel[0] not in "CGD":
            raise SlackError("channel_not_found")
        if channel in self.not_member:
            raise SlackError("not_in_channel")
        return self.messages.setdefault(channel, [])

    def _find(self, channel: str, ts: str) -> dict[str, Any]:
        for msg in self.messages.get(channel, []):
            if msg["ts"] == ts:
                return msg
        raise SlackError("message_not_found")

    def _require_parent(self, channel: str, thread_ts: str) -> None:
        try:
            parent = self._find(channel, thread_ts)
        except SlackError:
            raise SlackError("thread_not_found") from None
        parent.setdefault("thread_ts", parent["ts"])  # as Slack marks a thread's parent

    # -- methods -----------------------------------------------------------------------------

    def auth_test(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "url": "https://codecite-test.slack.com/",
            "team": "Codecite Test",
            "user": "codecite",
            "team_id": TEAM_ID,
            "user_id": BOT_USER_ID,
            "bot_id": BOT_ID,
            "is_enterprise_install": False,
        }

    def conversations_info(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = str(params.get("channel") or "")
        conversation = self.conversations.get(channel)
        if conversation is None:
            raise SlackError("channel_not_found")
        needed = _READ_SCOPES[_kind_of(conversation)]
        if needed in self.missing_scopes:
            raise SlackError("missing_scope", needed=needed, provided="chat:write")
        if channel in self.not_member and _kind_of(conversation) != "public":
            raise SlackError("channel_not_found")  # the bot cannot see private conversations
        return {"channel": dict(conversation)}

    def post_message(self, params: dict[str, Any]) -> dict[str, Any]:
        history = self._channel(params)
        check_message(params)
        if self.reject_blocks and params.get("blocks"):
            raise SlackError("invalid_blocks")
        msg: dict[str, Any] = {"type": "message", "user": BOT_USER_ID, "bot_id": BOT_ID}
        msg.update(ts=self.next_ts(), text=params.get("text", ""), blocks=params.get("blocks"))
        msg.update(_pane().metadata_of(params))
        if params.get("thread_ts"):
            self._require_parent(params["channel"], str(params["thread_ts"]))
            msg["thread_ts"] = str(params["thread_ts"])
        history.append(msg)
        record_view(self, "chat.postMessage", str(params["channel"]), msg)
        return {"channel": params["channel"], "ts": msg["ts"], "message": msg}

    def post_ephemeral(self, params: dict[str, Any]) -> dict[str, Any]:
        self._channel(params)
        if not params.get("user"):
            raise SlackError("user_not_found")
        check_message(params)
        if self.reject_blocks and params.get("blocks"):
            raise SlackError("invalid_blocks")
        self.ephemerals.append(dict(params))
        return {"message_ts": self.next_ts()}

    def update(self, params: dict[str, Any]) -> dict[str, Any]:
        self._channel(params)
        msg = self._find(params["channel"], str(params.get("ts", "")))
        if msg.get("bot_id") != BOT_ID:
            raise SlackError("cant_update_message")
        check_message(params)
        msg.update(text=params.get("text", ""), blocks=params.get("blocks"))
        msg.pop("stream", None)  # the update replaces what was streamed
        msg.update(_pane().metadata_of(params))
        record_view(self, "chat.update", str(params["channel"]), msg)
        return {"channel": params["channel"], "ts": msg["ts"]}

    def reactions_add(self, params: dict[str, Any]) -> dict[str, Any]:
        self._channel(params)
        msg = self._find(params["channel"], str(params.get("timestamp", "")))
        name = str(params.get("name") or "")
        if not name or ":" in name:
            raise SlackError("invalid_name")
        users = msg.setdefault("reactions", {}).setdefault(name, [])
        if BOT_USER_ID in users:
            raise SlackError("already_reacted")
        users.append(BOT_USER_ID)
        return {}

    def reactions_remove(self, params: dict[str, Any]) -> dict[str, Any]:
        self._channel(params)
        msg = self._find(params["channel"], str(params.get("timestamp", "")))
        users = msg.get("reactions", {}).get(str(params.get("name")), [])
        if BOT_USER_ID not in users:
            raise SlackError("no_reaction")
        users.remove(BOT_USER_ID)
        return {}

    def replies(self, params: dict[str, Any]) -> dict[str, Any]:
        history = self._channel(params)
        try:
            parent = self._find(params["channel"], str(params.get("ts", "")))
        except SlackError:
            raise SlackError("thread_not_found") from None
        root = parent.get("thread_ts", parent["ts"])
        thread = sorted(
            (m for m in history if m["ts"] == root or m.get("thread_ts") == root),
            key=lambda m: float(m["ts"]),
        )
        limit = min(int(params.get("limit") or 1000), 1000)
        start = int(str(params.get("cursor") or "off:0").removeprefix("off:"))
        page = thread[start : start + limit]
        more = start + limit < len(thread)
        meta = {"next_cursor": f"off:{start + limit}" if more else ""}
        listed = [_pane().as_listed(m, params) for m in page]
        return {"messages": listed, "has_more": more, "response_metadata": meta}


_METHODS: dict[str, Callable[[FakeSlack, dict[str, Any]], dict[str, Any]]] = {
    "auth.test": FakeSlack.auth_test,
    "chat.postMessage": FakeSlack.post_message,
    "chat.postEphemeral": FakeSlack.post_ephemeral,
    "chat.update": FakeSlack.update,
    "reactions.add": FakeSlack.reactions_add,
    "reactions.remove": FakeSlack.reactions_remove,
    "conversations.replies": FakeSlack.replies,
    "conversations.info": FakeSlack.conversations_info,
    **STREAM_METHODS,
    **FILES_METHODS,
}

_PREFIX_KINDS = {"C": "public", "G": "private", "D": "im"}
_READ_SCOPES = {
    "public": "channels:read",
    "private": "groups:read",
    "im": "im:read",
    "mpim": "mpim:read",
}


def _conversation_object(channel: str, kind: str, ext_shared: bool) -> dict[str, Any]:
    """The conversation object as conversations.info returns it for each kind.

    Shapes follow Slack's reference: an im has `is_im` and `user` but no
    `is_private`; an mpim has `is_mpim`, `is_private` and `is_group: false`.
    """
    created = 1_700_000_000
    if kind == "im":
        return {
            "id": channel,
            "created": created,
            "is_im": True,
            "is_org_shared": False,
            "user": "UOTHER",
            "is_user_deleted": False,
            "priority": 0,
            **({"is_ext_shared": True} if ext_shared else {}),
        }
    if kind not in ("public", "private", "mpim"):
        raise ValueError(f"unknown conversation kind {kind!r}")
    return {
        "id": channel,
        "name": "mpdm-a--b--c-1" if kind == "mpim" else channel.lower(),
        "is_channel": kind == "public",
        "is_group": kind == "private",
        "is_im": False,
        "is_mpim": kind == "mpim",
        "is_private": kind != "public",
        "created": created,
        "is_archived": False,
        "is_general": False,
        "is_shared": ext_shared,
        "is_ext_shared": ext_shared,
        "is_org_shared": False,
        "is_pending_ext_shared": False,
        "is_member": True,
        "context_team_id": TEAM_ID,
        "shared_team_ids": [TEAM_ID, "T0OTHERORG"] if ext_shared else [TEAM_ID],
    }


def _kind_of(conversation: dict[str, Any]) -> str:
    if conversation.get("is_im"):
        return "im"
    if conversation.get("is_mpim"):
        return "mpim"
    return "private" if conversation.get("is_private") else "public"


def _handler(fake: FakeSlack) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            return

        def do_GET(self) -> None:
            params = self._query()
            if not self._faulted(params):
                self._api(params)

        def do_POST(self) -> None:
            path = urlsplit(self.path).path
            if path.startswith("/upload/"):  # a file's bytes, to the URL Slack handed out
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, text = receive(fake, path.removeprefix("/upload/"), raw)
                self._send(status, text, "text/plain")
                return
            params = self._query()
            params.update(self._body())
            if self._faulted(params):
                return
            path = urlsplit(self.path).path
            if path.startswith("/response/"):
                status, text = fake.respond(path.removeprefix("/response/"), params)
                self._send(status, text, "text/plain")
                return
            self._api(params)

        def _faulted(self, params: dict[str, Any]) -> bool:
            """Apply a pending fault to this request; True when it was answered (or dropped)."""
            path = urlsplit(self.path).path
            method = path.removeprefix("/api/")
            if path.startswith("/response/"):
                method = "response_url:" + path.removeprefix("/response/")
            fault = fake.take_fault(method, path, params)
            if fault is None:
                return False
            if fault.kind == "drop":
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)
                return True
            headers: dict[str, str] = {}
            if fault.status == 429:
                # Slack always says how long to wait, in whole seconds.
                wait = 1.0 if fault.retry_after is None else fault.retry_after
                headers["Retry-After"] = str(math.ceil(wait))
                body = json.dumps({"ok": False, "error": "ratelimited"})
                self._send(429, body, "application/json; charset=utf-8", headers)
                return True
            if fault.retry_after is not None:
                headers["Retry-After"] = str(math.ceil(fault.retry_after))
            page = f"<html><body><h1>{fault.status} Server Error</h1></body></html>"
            self._send(fault.status, page, "text/html", headers)
            return True

        def _api(self, params: dict[str, Any]) -> None:
            path = urlsplit(self.path).path
            if not path.startswith("/api/"):
                self._send(404, "not found", "text/plain")
                return
            auth = self.headers.get("Authorization", "")
            token = auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else ""
            token = token or str(params.pop("token", ""))
            result = fake.handle(path.removeprefix("/api/"), params, token)
            self._send(200, json.dumps(result), "application/json; charset=utf-8")

        def _query(self) -> dict[str, Any]:
            query = parse_qs(urlsplit(self.path).query)
            return {k: v[-1] for k, v in query.items()}

        def _body(self) -> dict[str, Any]:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if not raw:
                return {}
            if self.headers.get("Content-Type", "").startswith("application/json"):
                data = json.loads(raw)
                return data if isinstance(data, dict) else {}
            return {k: v[-1] for k, v in parse_qs(raw.decode()).items()}

        def _send(
            self,
            status: int,
            body: str,
            content_type: str,
            headers: dict[str, str] | None = None,
        ) -> None:
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler


def _pane() -> ModuleType:
    """The AI-app pane's methods and message metadata live in their own module."""
    from tests.servers import slack_assistant_fake  # imported late: it imports this module

    return slack_assistant_fake
