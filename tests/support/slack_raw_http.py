"""Slack-signed raw requests, and a small real Bolt App to put behind the HTTP server.

The socket-level helpers live in tests/support/raw_http.py, shared with the webhook tests.
"""

from __future__ import annotations

import hashlib
import hmac
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

from adapters.common.http_limits import HTTPLimits
from adapters.slack.http_server import EVENTS_PATH, SlackHTTPServer
from tests.servers.slack_fake import BOT_TOKEN, FakeSlack
from tests.support.raw_http import connect, raw_request
from tests.support.slack_driver import SIGNING_SECRET, event_body


@dataclass
class Served:
    app: App
    server: SlackHTTPServer
    mentions: list[dict[str, Any]] = field(default_factory=list)

    @property
    def port(self) -> int:
        return self.server.port

    def connect(self) -> socket.socket:
        return connect(self.port)


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
    """Request bytes to the events path unless told otherwise (see `raw_request`)."""
    return raw_request(body, path=path, headers=headers, method=method, length=length)


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
