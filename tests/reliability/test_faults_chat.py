"""Fault injection through the chat adapters: the real Bolt app and discord.py against fakes.

Slack: the Web API answers 429 / 5xx or drops the connection on the calls an
answer depends on, the Socket Mode WebSocket closes under the app, and the
thread history cannot be read. Discord: channel sends and interaction
follow-ups are rate limited, fail with 5xx or lose their connection. Each
test checks what the asker sees (the answer, or nothing broken and the next
question answered) and how often the SDK tried. The SDKs' backoff sleeps are
recorded and made instant, so a test also proves a server's Retry-After was
honoured without waiting for it.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import discord.http
import discord.webhook.async_
import pytest
import slack_sdk.http_retry.builtin_handlers
import slack_sdk.http_retry.handler

from adapters.slack import serve as serve_module
from adapters.slack.app import SlackBot, build_bot
from adapters.slack.http_server import SlackHTTPServer
from adapters.slack.serve import start_http, start_socket_mode
from bot.config import FileConfig, Settings
from bot.core import Core
from tests.servers.discord_fake import APP_ID, DiscordFake, InteractionState
from tests.servers.slack_fake import APP_TOKEN, BOT_TOKEN, BOT_USER_ID, FakeSlack
from tests.servers.slack_socket_fake import FakeSocketMode
from tests.support.discord_gateway import OPEN_CHANNEL, bot_user, mention
from tests.support.discord_harness import Harness, running
from tests.support.fault_tally import FaultTally, tally_fixture
from tests.support.gitrepo import GitRepo
from tests.support.slack_driver import (
    BILLING_PY,
    CHANNEL,
    SIGNING_SECRET,
    Driver,
    event_body,
    replies_in,
)
from tests.support.snippets import WEBHOOK_RETRY_PY as APP_PY

QUESTION = "where do we retry failed webhooks?"
CITED = "shop/webhooks.py:L"
POST = "chat.postMessage"

faults = tally_fixture()


@pytest.fixture(scope="module")
def indexed_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two repositories indexed once; each test answers from its own copy of this directory."""
    root = tmp_path_factory.mktemp("chat-faults")
    shop = GitRepo(root / "shop")
    shop.write("shop/webhooks.py", APP_PY)
    shop.commit("webhooks")
    billing = GitRepo(root / "billing")
    billing.write("billing/discounts.py", BILLING_PY)
    billing.commit("discounts")
    settings = Settings(  # type: ignore[call-arg]
        CODECITE_HOME=root / "home", OPENAI_API_KEY=None, OPENAI_BASE_URL=None
    )
    core = Core.from_settings(settings, FileConfig())
    core.index_repo(str(shop.path), name="shop")
    core.index_repo(str(billing.path), name="billing")
    core.close()
    return root / "home"


def copied_core(indexed_home: Path) -> Core:
    """A Core over this test's copy of the indexed data (CODECITE_HOME from tests/conftest.py)."""
    settings = Settings()
    shutil.copytree(indexed_home, settings.home)
    return Core.from_settings(settings, FileConfig())


@pytest.fixture
def core(indexed_home: Path) -> Iterator[Core]:
    core = copied_core(indexed_home)
    yield core
    core.close()


# -- Slack -----------------------------------------------------------------------------------


@pytest.fixture
def slack_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The slack_sdk retry handlers' sleeps: recorded, not slept."""
    waits: list[float] = []
    instant = SimpleNamespace(sleep=waits.append)
    monkeypatch.setattr(slack_sdk.http_retry.handler, "time", instant)
    monkeypatch.setattr(slack_sdk.http_retry.builtin_handlers, "time", instant)
    return waits


@pytest.fixture
def slack(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
        monkeypatch.setenv("SLACK_SIGNING_SECRET", SIGNING_SECRET)
        monkeypatch.setenv("CODECITE_SLACK_API_URL", fake.base_url)
        yield fake


@dataclass
class SlackApp:
    bot: SlackBot
    server: SlackHTTPServer
    driver: Driver

    def drain(self) -> None:
        """Stop taking events and finish the accepted ones: nothing is posted afterwards."""
        self.server.stop()
        self.bot.close()


@pytest.fixture
def slack_core(slack: FakeSlack, indexed_home: Path) -> Iterator[Core]:
    core = copied_core(indexed_home)  # after `slack`: its settings carry the Slack variables
    yield core
    core.close()


@pytest.fixture
def slack_app(slack: FakeSlack, slack_core: Core, slack_waits: list[float]) -> Iterator[SlackApp]:
    bot = build_bot(slack_core)
    server = start_http(bot, host="127.0.0.1", port=0)
    app = SlackApp(bot, server, Driver(slack, server.url()))
    yield app
    app.drain()


def statuses(slack: FakeSlack, method: str) -> list[int]:
    return [c.status for c in slack.calls if c.method == method]


def answered(slack: FakeSlack, ts: str, n: int = 1, channel: str = CHANNEL) -> list[dict[str, Any]]:
    """The bot's replies in the thread of `ts`, once there are `n` of them."""
    return slack.wait_for(lambda: (r := replies_in(slack, channel, ts)) and len(r) >= n and r)


def eyes_removed(slack: FakeSlack, ts: str) -> bool:
    removed = [c.params for c in slack.calls_to("reactions.remove")]
    return any(p["timestamp"] == ts and p["name"] == "eyes" for p in removed)


def test_slack_rate_limit_on_post_is_waited_out(
    slack: FakeSlack, slack_app: SlackApp, slack_waits: list[float], faults: FaultTally
) -> None:
    slack.fail_next(429, retry_after=3, method_or_path=POST)
    faults.inject("slack 429")
    msg = slack_app.driver.say(QUESTION)
    [reply] = answered(slack, msg["ts"])
    assert CITED in reply["text"]
    assert statuses(slack, POST) == [429, 200]
    assert [w for w in slack_waits if w >= 3] and all(w < 4 for w in slack_waits)  # Retry-After
    faults.survive("slack 429")


def test_slack_server_error_once_is_retried(
    slack: FakeSlack, slack_app: SlackApp, faults: FaultTally
) -> None:
    slack.fail_next(500, method_or_path=POST)
    faults.inject("slack 500")
    msg = slack_app.driver.say(QUESTION)
    [reply] = answered(slack, msg["ts"])
    assert CITED in reply["text"] and statuses(slack, POST) == [500, 200]
    faults.survive("slack 500")


def test_slack_dropped_connection_on_post_is_retried(
    slack: FakeSlack, slack_app: SlackApp, faults: FaultTally
) -> None:
    slack.drop_next(method_or_path=POST)
    faults.inject("slack dropped")
    msg = slack_app.driver.say(QUESTION)
    [reply] = answered(slack, msg["ts"])
    assert CITED in reply["text"] and statuses(slack, POST) == [-1, 200]
    faults.survive("slack dropped")


def test_slack_post_failing_for_good_is_logged_and_the_next_mention_is_answered(
    slack: FakeSlack,
    slack_app: SlackApp,
    caplog: pytest.LogCaptureFixture,
    faults: FaultTally,
) -> None:
    slack.fail_next(500, count=3, method_or_path=POST)  # the first try and both retries
    faults.inject("slack 500", 3)
    with caplog.at_level(logging.ERROR, logger="adapters.slack"):
        lost = slack_app.driver.say(QUESTION)
        slack.wait_for(lambda: eyes_removed(slack, lost["ts"]))  # 👀 goes even without an answer
    assert statuses(slack, POST) == [500, 500, 500]
    assert not replies_in(slack, CHANNEL, lost["ts"])
    [record] = [r for r in caplog.records if "could not post the answer" in r.getMessage()]
    assert CHANNEL in record.getMessage() and record.exc_info is None  # one line, no traceback

    msg = slack_app.driver.say(QUESTION)
    [reply] = answered(slack, msg["ts"])
    assert CITED in reply["text"]
    slack.wait_for(lambda: eyes_removed(slack, msg["ts"]))
    faults.survive("slack 500", 3)


def test_slack_thread_history_unreadable_still_answers_the_follow_up(
    slack: FakeSlack, slack_app: SlackApp, faults: FaultTally
) -> None:
    driver = slack_app.driver
    msg = driver.say(QUESTION)
    answered(slack, msg["ts"])
    # Once: the retry handler reads the thread on its second try; the history is used.
    slack.fail_next(503, method_or_path="conversations.replies")
    faults.inject("slack 503 replies")
    driver.say("and how many attempts are made?", thread_ts=msg["ts"], mention=False)
    answered(slack, msg["ts"], n=2)
    assert statuses(slack, "conversations.replies") == [503, 200]
    faults.survive("slack 503 replies")
    # For good: the thread cannot be read, but codecite answered there, so it still answers.
    slack.fail_next(500, count=3, method_or_path="conversations.replies")
    faults.inject("slack 500 replies", 3)
    driver.say("which function retries failed webhooks?", thread_ts=msg["ts"], mention=False)
    third = answered(slack, msg["ts"], n=3)[-1]
    assert CITED in third["text"]
    assert statuses(slack, "conversations.replies")[2:] == [500, 500, 500]
    faults.survive("slack 500 replies", 3)


def test_slack_unreadable_thread_the_bot_never_joined_stays_quiet(
    slack: FakeSlack, slack_app: SlackApp
) -> None:
    parent = slack.add_message(CHANNEL, "U1", "lunch?")
    slack.fail_next(500, count=3, method_or_path="conversations.replies")
    slack_app.driver.say(
        "where do we retry failed webhooks?", thread_ts=parent["ts"], mention=False
    )
    slack.wait_for(lambda: len(statuses(slack, "conversations.replies")) == 3)
    slack_app.drain()
    assert not slack.calls_to(POST) and not slack.calls_to("reactions.add")


# -- Slack Socket Mode -----------------------------------------------------------------------


class DroppingSocket(FakeSocketMode):
    """The Socket Mode endpoint, able to close the live connection or ask for a refresh."""

    def __init__(self) -> None:
        super().__init__()
        self.sessions = 0

    def _session(self, ws: Any) -> None:
        with self._cond:
            self.sessions += 1
        super()._session(ws)

    def drop(self) -> None:
        """Close the connection under the app, as a network or an edge restart does."""
        self.live().close()

    def refresh(self) -> None:
        """What Slack sends before it rotates a connection."""
        message = {"type": "disconnect", "reason": "refresh_requested", "debug_info": {}}
        self.live().send(json.dumps(message))

    def live(self) -> Any:
        with self._cond:
            conn, self._conn = self._conn, None  # the next send waits for a new connection
        assert conn is not None
        return conn

    def wait_sessions(self, n: int, timeout: float = 20.0) -> None:
        with self._cond:
            if not self._cond.wait_for(lambda: self.sessions >= n, timeout):
                raise AssertionError(f"{self.sessions} connection(s), expected {n}")


def _mention_over(socket: DroppingSocket, slack: FakeSlack, event_id: str) -> dict[str, Any]:
    """A mention delivered as an envelope; returns the bot's reply once it is posted."""
    msg = slack.add_message(CHANNEL, "UASKER", f"<@{BOT_USER_ID}> {QUESTION}")
    event = {"type": "app_mention", "user": "UASKER", "text": msg["text"], "ts": msg["ts"]}
    event["channel"] = CHANNEL
    envelope = socket.send("events_api", event_body(event, event_id))
    assert socket.wait_ack(envelope) == {"envelope_id": envelope}
    return answered(slack, msg["ts"])[0]


@pytest.mark.parametrize("how", ["refresh", "drop"])
def test_socket_mode_reconnects_and_answers_on_the_new_connection(
    slack: FakeSlack,
    slack_core: Core,
    slack_waits: list[float],
    monkeypatch: pytest.MonkeyPatch,
    faults: FaultTally,
    how: str,
) -> None:
    # A dropped socket is noticed by the client's monitor, every ping_interval (10 s in
    # Bolt); a short one keeps the test quick. A refresh reconnects at once.
    short = functools.partial(serve_module.SocketModeHandler, ping_interval=0.5)
    monkeypatch.setattr(serve_module, "SocketModeHandler", short)
    bot = build_bot(slack_core)
    with DroppingSocket() as socket:
        slack.socket_url = socket.url
        handler = start_socket_mode(bot, APP_TOKEN)
        try:
            assert CITED in _mention_over(socket, slack, "EvSOCKET1")["text"]
            socket.refresh() if how == "refresh" else socket.drop()
            faults.inject(f"socket {how}")
            socket.wait_sessions(2)  # apps.connections.open again, then a new WebSocket
            assert CITED in _mention_over(socket, slack, "EvSOCKET2")["text"]
            # One reconnection; a loaded machine can miss a 0.5 s pong and earn one more,
            # never a storm.
            assert 2 <= len(slack.calls_to("apps.connections.open")) <= 3
            faults.survive(f"socket {how}")
        finally:
            handler.client.close()
            bot.close()


# -- Discord ---------------------------------------------------------------------------------

_REAL_SLEEP = asyncio.sleep
MESSAGES = rf"POST /channels/{OPEN_CHANNEL}/messages"
FOLLOWUP = rf"POST /webhooks/{APP_ID}/[^/]+"


class InstantAsyncio:
    """`asyncio` as discord.py's HTTP clients see it: backoff sleeps are recorded, not slept."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(asyncio, name)

    async def sleep(self, delay: float, result: Any = None) -> Any:
        self.waits.append(delay)
        await _REAL_SLEEP(0)
        return result


@pytest.fixture
def discord_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    instant = InstantAsyncio()
    monkeypatch.setattr(discord.http, "asyncio", instant)
    monkeypatch.setattr(discord.webhook.async_, "asyncio", instant)
    return instant.waits


def run_discord(core: Core, scenario: Callable[[Harness], Any]) -> None:
    async def main() -> None:
        async with running(core) as h:
            await scenario(h)

    asyncio.run(main())


def sent(fake: DiscordFake, pattern: str = MESSAGES) -> list[int]:
    """Statuses of the requests matching "METHOD path-regex", in order (-1: dropped)."""
    method, _, path = pattern.partition(" ")
    rx = re.compile(path)
    return [r.status for r in fake.requests if r.method == method and rx.fullmatch(r.path)]


async def ask_in_channel(h: Harness) -> dict[str, Any]:
    """Mention the bot; the newest bot message in the channel, once there is one."""
    h.say(OPEN_CHANNEL, mention(QUESTION), mentions=[bot_user()])
    await h.fake.wait_for(lambda: h.fake.bot_messages(OPEN_CHANNEL))
    await h.settle()
    return h.fake.bot_messages(OPEN_CHANNEL)[-1]


@pytest.mark.parametrize("is_global", [False, True], ids=["route", "global"])
def test_discord_rate_limit_on_send_is_waited_out(
    core: Core, discord_waits: list[float], faults: FaultTally, is_global: bool
) -> None:
    async def scenario(h: Harness) -> None:
        h.fake.fail_next(429, retry_after=2.5, method_or_path=MESSAGES, is_global=is_global)
        faults.inject("discord 429")
        reply = await ask_in_channel(h)
        assert CITED in reply["content"]
        assert sent(h.fake) == [429, 200]
        assert 2.5 in discord_waits  # the body's retry_after, to the millisecond
        faults.survive("discord 429")

    run_discord(core, scenario)


def test_discord_server_error_once_is_retried(
    core: Core, discord_waits: list[float], faults: FaultTally
) -> None:
    async def scenario(h: Harness) -> None:
        h.fake.fail_next(500, method_or_path=MESSAGES)
        faults.inject("discord 500")
        reply = await ask_in_channel(h)
        assert CITED in reply["content"] and sent(h.fake) == [500, 200]
        assert [w for w in discord_waits if w] == [1]  # discord.py's backoff: 1 + 2 * tries s
        faults.survive("discord 500")

    run_discord(core, scenario)


def test_discord_send_failing_for_good_is_logged_and_the_next_mention_is_answered(
    core: Core, discord_waits: list[float], caplog: pytest.LogCaptureFixture, faults: FaultTally
) -> None:
    async def scenario(h: Harness) -> None:
        h.fake.fail_next(500, count=5, method_or_path=MESSAGES)  # every one of discord.py's tries
        faults.inject("discord 500", 5)
        with caplog.at_level(logging.WARNING, logger="adapters.discord"):
            question = h.say(OPEN_CHANNEL, mention(QUESTION), mentions=[bot_user()])
            await h.fake.wait_for(lambda: len(sent(h.fake)) == 5)
            await h.settle()
        assert sent(h.fake) == [500] * 5 and not h.fake.bot_messages(OPEN_CHANNEL)
        [record] = [r for r in caplog.records if "could not post a reply" in r.getMessage()]
        assert question["id"] in record.getMessage() and "500" in record.getMessage()
        reply = await ask_in_channel(h)
        assert CITED in reply["content"]
        faults.survive("discord 500", 5)

    run_discord(core, scenario)


@pytest.mark.parametrize("processed", [False, True], ids=["before", "after-posting"])
def test_discord_dropped_connection_on_send_is_sent_again_once(
    core: Core, discord_waits: list[float], faults: FaultTally, processed: bool
) -> None:
    async def scenario(h: Harness) -> None:
        h.fake.drop_next(method_or_path=MESSAGES, processed=processed)
        faults.inject("discord dropped")
        reply = await ask_in_channel(h)
        assert CITED in reply["content"]
        assert sent(h.fake) == [-1, 200]
        # The repeat carried the same nonce: a message that did arrive is not posted twice.
        assert len(h.fake.bot_messages(OPEN_CHANNEL)) == 1
        nonces = [r.body["nonce"] for r in h.fake.requests if r.path.endswith("/messages")]
        assert len(set(nonces)) == 1 and h.fake.requests[-1].body["enforce_nonce"] is True
        faults.survive("discord dropped")

    run_discord(core, scenario)


def test_discord_connection_lost_twice_is_logged_and_the_next_mention_is_answered(
    core: Core, discord_waits: list[float], caplog: pytest.LogCaptureFixture, faults: FaultTally
) -> None:
    async def scenario(h: Harness) -> None:
        h.fake.drop_next(2, method_or_path=MESSAGES)
        faults.inject("discord dropped", 2)
        with caplog.at_level(logging.WARNING, logger="adapters.discord"):
            question = h.say(OPEN_CHANNEL, mention(QUESTION), mentions=[bot_user()])
            await h.fake.wait_for(lambda: len(sent(h.fake)) == 2)
            await h.settle()
        [record] = [r for r in caplog.records if "could not post a reply" in r.getMessage()]
        assert question["id"] in record.getMessage() and record.exc_info is None
        reply = await ask_in_channel(h)
        assert CITED in reply["content"] and sent(h.fake) == [-1, -1, 200]
        faults.survive("discord dropped", 2)

    run_discord(core, scenario)


@pytest.mark.parametrize("status", [429, 500])
def test_discord_interaction_follow_up_failing_once_is_retried(
    core: Core, discord_waits: list[float], faults: FaultTally, status: int
) -> None:
    async def scenario(h: Harness) -> None:
        h.fake.fail_next(status, retry_after=0.5, method_or_path=FOLLOWUP)
        faults.inject(f"discord {status} follow-up")
        state: InteractionState = h.slash("ask", {"question": QUESTION})
        await h.fake.wait_for(lambda: state.messages)
        await h.settle()
        [message] = state.messages
        assert CITED in message["content"]
        assert sent(h.fake, FOLLOWUP) == [status, 200]
        faults.survive(f"discord {status} follow-up")

    run_discord(core, scenario)
