"""Driving the Slack adapter over real HTTP and Socket Mode against the fake Slack: signing, event bodies, a recording driver."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlencode

import pytest

from adapters.slack.app import SlackBot, build_bot
from adapters.slack.http_server import SlackHTTPServer
from adapters.slack.serve import start_http
from bot.answer.streaming import AnswerStream
from bot.core import Context, Core
from bot.models import Answer, Turn
from tests.servers.slack_fake import BOT_USER_ID, TEAM_ID, FakeSlack

SIGNING_SECRET = "test-signing-secret"
T = TypeVar("T")


CHANNEL = "C0GENERAL"


BILLING_PY = '''"""Invoices."""


def compute_volume_discount(total):
    """Large orders get a volume discount."""
    if total > 10_000:
        return total * 0.05
    return 0
'''


@dataclass
class Recorded:
    """What the adapter handed the Core (the thread history in particular)."""

    asks: list[tuple[str, Context, tuple[Turn, ...]]] = field(default_factory=list)
    answers: list[Answer] = field(default_factory=list)


@dataclass
class Running:
    bot: SlackBot
    server: SlackHTTPServer


def _run(core: Core) -> Running:
    bot = build_bot(core)
    return Running(bot, start_http(bot, host="127.0.0.1", port=0))


def sign(body: str, timestamp: int, secret: str = SIGNING_SECRET) -> str:
    digest = hmac.new(secret.encode(), f"v0:{timestamp}:{body}".encode(), hashlib.sha256)
    return "v0=" + digest.hexdigest()


def event_body(event: dict[str, Any], event_id: str, *, shared: bool = False) -> dict[str, Any]:
    """An Events API envelope around `event`, as Slack sends it (with is_ext_shared_channel)."""
    return {
        "token": "legacy",
        "team_id": TEAM_ID,
        "api_app_id": "A0APP",
        "event": {"event_ts": event.get("ts"), **event},
        "type": "event_callback",
        "event_id": event_id,
        "event_time": int(time.time()),
        "is_ext_shared_channel": shared,
        "authorizations": [{"team_id": TEAM_ID, "user_id": BOT_USER_ID, "is_bot": True}],
    }


class Driver:
    """Plays Slack's part: stores the user's message in the fake, then delivers the event."""

    def __init__(self, slack: FakeSlack, url: str) -> None:
        self.slack = slack
        self.url = url
        self._ids = itertools.count(1)

    def post(
        self,
        body: str,
        content_type: str,
        *,
        timestamp: int | None = None,
        signature: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, str]:
        ts = int(time.time()) if timestamp is None else timestamp
        request = urllib.request.Request(self.url, data=body.encode(), method="POST")
        request.add_header("Content-Type", content_type)
        request.add_header("X-Slack-Request-Timestamp", str(ts))
        request.add_header("X-Slack-Signature", signature or sign(body, ts))
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=10) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

    def event(
        self,
        event: dict[str, Any],
        *,
        event_id: str | None = None,
        retry: int | None = None,
        shared: bool = False,
    ) -> tuple[int, str]:
        body = event_body(event, event_id or f"Ev{next(self._ids):08d}", shared=shared)
        headers = {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
        return self.post(json.dumps(body), "application/json", headers=headers if retry else None)

    def say(
        self,
        text: str,
        *,
        channel: str = CHANNEL,
        user: str = "UASKER",
        thread_ts: str | None = None,
        mention: bool = True,
        channel_type: str = "channel",
        shared: bool = False,
    ) -> dict[str, Any]:
        """A user writes a message; Slack sends `message` and (if mentioned) `app_mention`.

        No `app_mention` in an im (Slack sends only `message.im` there); `shared` is the
        envelope's is_ext_shared_channel (a Slack Connect channel).
        """
        text = f"<@{BOT_USER_ID}> {text}" if mention else text
        msg = self.slack.add_message(channel, user, text, thread_ts=thread_ts)
        event: dict[str, Any] = {"user": user, "text": text, "ts": msg["ts"], "channel": channel}
        if thread_ts:
            event["thread_ts"] = thread_ts
        if mention and channel_type != "im":
            assert self.event({"type": "app_mention", **event}, shared=shared)[0] == 200
        message = {"type": "message", "channel_type": channel_type, **event}
        assert self.event(message, shared=shared)[0] == 200
        return msg

    def command(
        self, text: str, *, channel: str = CHANNEL, user: str = "UASKER"
    ) -> tuple[int, str, str]:
        """`/codecite <text>`; returns (status, ack body, response_url)."""
        response_url = self.slack.new_response_url()
        form = {
            "token": "legacy",
            "team_id": TEAM_ID,
            "team_domain": "codecite-test",
            "channel_id": channel,
            "channel_name": "general",
            "user_id": user,
            "user_name": "asker",
            "command": "/codecite",
            "text": text,
            "api_app_id": "A0APP",
            "response_url": response_url,
            "trigger_id": f"trig.{next(self._ids)}",
        }
        status, body = self.post(urlencode(form), "application/x-www-form-urlencoded")
        return status, body, response_url

    def click(
        self,
        action_id: str,
        value: str,
        *,
        user: str,
        message: dict[str, Any] | None,
        block_id: str = "codecite_feedback",
        channel: str = CHANNEL,
        response_url: str = "",
    ) -> int:
        """A button click; `message` None: on an ephemeral message (Slack sends none)."""
        container: dict[str, Any] = {"type": "message", "channel_id": channel}
        if message is None:
            container.update(message_ts=self.slack.next_ts(), is_ephemeral=True)
        else:
            container["message_ts"] = message["ts"]
        payload = {
            "type": "block_actions",
            "user": {"id": user, "team_id": TEAM_ID},
            "api_app_id": "A0APP",
            "team": {"id": TEAM_ID},
            "container": container,
            "trigger_id": f"trig.{next(self._ids)}",
            "channel": {"id": channel},
            "response_url": response_url or self.slack.new_response_url(),
            "actions": [
                {
                    "type": "button",
                    "action_id": action_id,
                    "block_id": block_id,
                    "value": value,
                    "action_ts": str(time.time()),
                }
            ],
        }
        if message is not None:
            payload["message"] = message
        body = urlencode({"payload": json.dumps(payload)})
        return self.post(body, "application/x-www-form-urlencoded")[0]


def replies_in(slack: FakeSlack, channel: str, thread_ts: str) -> list[dict[str, Any]]:
    return [m for m in slack.bot_posts(channel) if m.get("thread_ts") == thread_ts]


def patch_answers(
    monkeypatch: pytest.MonkeyPatch, core: Core, change: Callable[[Answer], Answer]
) -> None:
    """Pass every answer through `change`, whole (`core.ask`) or streamed (`ask_stream`)."""
    real_ask, real_stream = core.ask, core.ask_stream

    def ask(*args: Any, **kwargs: Any) -> Answer:
        return change(real_ask(*args, **kwargs))

    def ask_stream(*args: Any, **kwargs: Any) -> AnswerStream:
        return real_stream(*args, **kwargs).then(change)

    monkeypatch.setattr(core, "ask", ask)
    monkeypatch.setattr(core, "ask_stream", ask_stream)


class Gate:
    """Holds `core.ask` until released, so a test can look at what happened before the answer."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def install(self, monkeypatch: pytest.MonkeyPatch, core: Core) -> None:
        """Hold both ways of answering: whole (`ask`) and streamed (`ask_stream`)."""
        monkeypatch.setattr(core, "ask", self.wrap(core.ask))
        monkeypatch.setattr(core, "ask_stream", self.wrap(core.ask_stream))

    def wrap(self, ask: Callable[..., T]) -> Callable[..., T]:
        def gated(*args: Any, **kwargs: Any) -> T:
            self.entered.set()
            if not self.release.wait(timeout=30):
                raise AssertionError("gate never released")
            return ask(*args, **kwargs)

        return gated
