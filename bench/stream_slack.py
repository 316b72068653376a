"""The streaming bench's Slack surfaces, each the real Bolt app against the fake Web API.

- `slack-http`: mentions as signed events to codecite's own HTTP server (Slack sends
  `app_mention` and `message` for each, as it does);
- `slack-socket`: the same events over Socket Mode (the real SocketModeHandler on the
  fake Socket Mode WebSocket);
- `slack-command`: `/codecite ask ...` over HTTP, answered at the top of the channel (no
  thread to stream into: one message, updated);
- `slack-refused`: mentions over HTTP in a workspace that refuses chat streaming
  (`not_allowed`), so the postMessage + update fallback carries them.

Each question is asked in a channel of its own, so every call of the fake names its
answer by channel.
"""

from __future__ import annotations

import contextlib
import itertools
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from adapters.slack.app import build_bot
from adapters.slack.serve import start_http, start_socket_mode
from adapters.slack.settings import SlackSettings
from bench.stream_measure import Load, Measured, is_note, sentence_check
from bot.core import Core
from tests.servers.slack_fake import APP_TOKEN, BOT_TOKEN, BOT_USER_ID, FakeSlack
from tests.servers.slack_socket_fake import FakeSocketMode
from tests.servers.slack_stream_fake import View
from tests.support.slack_driver import SIGNING_SECRET, Driver, event_body

SURFACES = ("slack-http", "slack-socket", "slack-command", "slack-refused")
TEXT_METHODS = frozenset(
    {"chat.postMessage", "chat.update", "chat.startStream", "chat.appendStream", "chat.stopStream"}
)
Send = Callable[[str, str, str], None]  # (channel, user, question)


def run(surface: str, core: Core, load: Load) -> list[Measured]:
    """Ask every question of `load` of a bot on a fresh fake Slack."""
    with FakeSlack() as slack:
        slack.refuse_streaming = "not_allowed" if surface == "slack-refused" else ""
        channels = [f"C{i:06d}Q" for i in range(len(load.questions))]
        for channel in channels:
            slack.add_conversation(channel, "public")
        with _connected(surface, core, slack) as send:

            def ask(i: int) -> float:
                sent = time.monotonic()
                try:
                    send(channels[i], f"U{i:06d}", load.questions[i])
                except (AssertionError, RuntimeError) as exc:  # refused: counted as unfinished
                    print(f"{surface}: question {i} was refused: {exc}", file=sys.stderr)
                    return sent
                with contextlib.suppress(AssertionError):  # counted as unfinished
                    slack.wait_for(lambda: _finished(slack, channels[i]), load.timeout)
                return sent

            with ThreadPoolExecutor(load.concurrency) as pool:
                sent = list(pool.map(ask, range(len(channels))))
        # The bot has closed: every answer it accepted is complete, every call recorded.
        return [_measure(slack, c, t, load.markers) for c, t in zip(channels, sent, strict=True)]


@contextmanager
def _connected(surface: str, core: Core, slack: FakeSlack) -> Iterator[Send]:
    settings = SlackSettings(  # type: ignore[call-arg]
        SLACK_BOT_TOKEN=BOT_TOKEN,
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
        CODECITE_SLACK_API_URL=slack.base_url,
    )
    bot = build_bot(core, settings=settings)
    try:
        if surface == "slack-socket":
            with FakeSocketMode() as socket:
                slack.socket_url = socket.url
                handler = start_socket_mode(bot, APP_TOKEN)
                try:
                    yield _socket_sender(slack, socket)
                finally:
                    handler.client.close()
        else:
            server = start_http(bot, host="127.0.0.1", port=0)
            try:
                driver = Driver(slack, server.url())
                yield _command_sender(driver) if surface == "slack-command" else _mention(driver)
            finally:
                server.stop()
    finally:
        bot.close()  # waits for the answers it accepted


def _mention(driver: Driver) -> Send:
    def send(channel: str, user: str, question: str) -> None:
        driver.say(question, channel=channel, user=user)  # asserts Bolt's 200s

    return send


def _command_sender(driver: Driver) -> Send:
    def send(channel: str, user: str, question: str) -> None:
        status, _, _ = driver.command(f"ask {question}", channel=channel, user=user)
        if status != 200:
            raise RuntimeError(f"/codecite was answered with HTTP {status}")

    return send


def _socket_sender(slack: FakeSlack, socket: FakeSocketMode) -> Send:
    ids = itertools.count(1)

    def send(channel: str, user: str, question: str) -> None:
        text = f"<@{BOT_USER_ID}> {question}"
        msg = slack.add_message(channel, user, text)
        event = {"user": user, "text": text, "ts": msg["ts"], "channel": channel}
        for kind in ({"type": "app_mention"}, {"type": "message", "channel_type": "channel"}):
            socket.send("events_api", event_body({**kind, **event}, f"EvS{next(ids):08d}"))

    return send


def _has_buttons(message: dict[str, Any]) -> bool:
    return any(b.get("type") == "actions" for b in message.get("blocks") or [])


def _finished(slack: FakeSlack, channel: str) -> bool:
    """The answer carries its vote buttons and is no longer a live stream."""
    return any(_has_buttons(m) and not m.get("streaming") for m in slack.bot_posts(channel))


def _measure(slack: FakeSlack, channel: str, sent: float, markers: Sequence[str]) -> Measured:
    views = [v for v in slack.views if v.channel == channel and not is_note(v.text)]
    first = next((v for v in views if v.text.strip()), None)
    finished = _finished(slack, channel)
    calls = [c for c in slack.calls if c.params.get("channel") == channel]
    missing, repeated = sentence_check(_final_text(views), markers)
    return Measured(
        first_text=first.at - sent if first else None,
        final=max(v.at for v in views) - sent if finished and views else None,
        calls=len(calls),
        text_calls=sum(1 for c in calls if c.method in TEXT_METHODS),
        refused=tuple(c.error for c in calls if not c.ok),
        route=_route([v.method for v in views]),
        messages=len({v.ts for v in views}),
        missing=missing,
        repeated=repeated,
        by_call=dict(Counter(c.method for c in calls)),
    )


def _final_text(views: list[View]) -> str:
    last: dict[str, str] = {}
    for view in views:
        last[view.ts] = view.text
    return "\n".join(last[ts] for ts in sorted(last, key=float))


def _route(methods: list[str]) -> str:
    if "chat.startStream" in methods:
        return "chat.startStream"
    if "chat.update" in methods:
        return "postMessage+update"
    return "postMessage" if methods else "none"
