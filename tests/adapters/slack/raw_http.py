"""Raw-socket clients for the Slack HTTP server, and a small real Bolt App to put behind it.

The abuse tests speak bytes, not urllib: a stalled header, a lying Content-Length,
a half-closed socket are things an HTTP library will not send.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from slack_bolt import App
from slack_sdk import WebClient

from adapters.slack.http_limits import HTTPLimits
from adapters.slack.http_server import EVENTS_PATH, SlackHTTPServer
from tests.adapters.slack.conftest import SIGNING_SECRET, event_body
from tests.servers.slack_fake import BOT_TOKEN, FakeSlack

HANG_GUARD = 20.0  # seconds: only so that a broken server fails a test instead of hanging it


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes


@dataclass
class Served:
    app: App
    server: SlackHTTPServer
    mentions: list[dict[str, Any]] = field(default_factory=list)

    @property
    def port(self) -> int:
        return self.server.port

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=HANG_GUARD)


@contextmanager
def serve_bolt(slack: FakeSlack, limits: HTTPLimits | None = None) -> Iterator[Served]:
    """A real Bolt App (auth.test against the fake) that records app_mention events."""
    app = App(
        name="codecite-abuse",
        client=WebClient(token=BOT_TOKEN, base_url=slack.base_url),
        signing_secret=SIGNING_SECRET,
    )
    served_lock = threading.Lock()
    mentions: list[dict[str, Any]] = []

    @app.event("app_mention")
    def on_mention(event: dict[str, Any]) -> None:
        with served_lock:
            mentions.append(event)

    server = SlackHTTPServer(app, host="127.0.0.1", port=0, limits=limits)
    server.start()
    try:
        yield Served(app, server, mentions)
    finally:
        server.stop()


def request(
    body: bytes,
    *,
    headers: dict[str, str] | None = None,
    method: str = "POST",
    path: str = EVENTS_PATH,
    length: str | None = None,
) -> bytes:
    """Request bytes as written: `length` overrides Content-Length ("" leaves it out)."""
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
    for name, value in (headers or {}).items():
        lines.append(f"{name}: {value}")
    declared = str(len(body)) if length is None else length
    if declared:
        lines.append(f"Content-Length: {declared}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def slack_headers(
    body: bytes,
    *,
    timestamp: str | None = None,
    secret: str = SIGNING_SECRET,
    content_type: str = "application/json",
) -> dict[str, str]:
    """Slack's headers for `body`; the signature is Slack's documented HMAC over the raw bytes."""
    ts = str(int(time.time())) if timestamp is None else timestamp
    digest = hmac.new(secret.encode(), b"v0:" + ts.encode() + b":" + body, hashlib.sha256)
    return {
        "Content-Type": content_type,
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": "v0=" + digest.hexdigest(),
    }


def signed(body: bytes, **kwargs: Any) -> bytes:
    return request(body, headers=slack_headers(body, **kwargs))


def mention_body(text: str = "<@UBOT0001> hello", event_id: str = "Ev1") -> bytes:
    event = {"type": "app_mention", "user": "UASKER", "text": text, "ts": "1.0001"}
    return json.dumps(event_body({**event, "channel": "C0GENERAL"}, event_id)).encode()


def read_reply(sock: socket.socket, method: str = "POST") -> Reply:
    response = http.client.HTTPResponse(sock, method=method)
    response.begin()
    body = response.read()
    return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, body)


def exchange(served: Served, data: bytes, *, half_close: bool = False) -> Reply:
    """One request on a fresh connection; `half_close` ends our side after sending."""
    with served.connect() as sock:
        sock.sendall(data)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        return read_reply(sock)


def closed_by_server(sock: socket.socket) -> bool:
    """True once the server has closed: EOF or a reset (waits up to HANG_GUARD)."""
    sock.settimeout(HANG_GUARD)
    try:
        while sock.recv(65536):
            pass
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False
    return True
