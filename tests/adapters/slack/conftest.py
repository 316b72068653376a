"""A real Core over real git repositories, the real Bolt app over HTTP, a strict fake Slack."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import shutil
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from adapters.slack.app import SlackBot, build_bot
from adapters.slack.http_server import SlackHTTPServer
from adapters.slack.serve import start_http
from bot.config import FileConfig, Settings, load_file_config
from bot.core import Context, Core
from bot.models import Answer, Turn
from tests.servers.slack_fake import BOT_TOKEN, BOT_USER_ID, TEAM_ID, FakeSlack
from tests.support.gitrepo import GitRepo
from tests.support.snippets import WEBHOOK_RETRY_PY as APP_PY

SIGNING_SECRET = "test-signing-secret"
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


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        # The conversations these tests use (conversations.info knows nothing else).
        for channel in (CHANNEL, "C0SHOP", "C0NOTHREADS", "C0PRIVATE"):
            fake.add_conversation(channel, "public")
        fake.add_conversation("D0DM", "im")
        yield fake


@pytest.fixture
def config_toml(tmp_path: Path) -> Path:
    path = tmp_path / "codecite.toml"
    path.write_text(
        'admins = ["UADMIN"]\n'
        "[channels.C0SHOP]\n"
        'repos = ["shop"]\n'
        "[channels.C0NOTHREADS]\n"
        'repos = ["shop", "billing"]\n'
        "threads = false\n",
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="session")
def indexed_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two real repositories indexed once; each test starts from a copy of this data directory."""
    root = tmp_path_factory.mktemp("slack-index")
    shop = GitRepo(root / "shop")  # git identity comes from GIT_ENV inside GitRepo
    shop.write("shop/webhooks.py", APP_PY)
    shop.commit("webhooks")
    billing = GitRepo(root / "billing")
    billing.write("billing/discounts.py", BILLING_PY)
    billing.commit("discounts")
    home = root / "home"
    # Init arguments beat the environment: no model, no embeddings, whatever the shell has.
    settings = Settings(  # type: ignore[call-arg]
        CODECITE_HOME=home, OPENAI_API_KEY=None, OPENAI_BASE_URL=None, CODECITE_INDEX="local"
    )
    core = Core.from_settings(settings, FileConfig())
    core.index_repo(str(shop.path), name="shop")
    core.index_repo(str(billing.path), name="billing")
    core.close()
    return home


@pytest.fixture
def core(
    slack: FakeSlack, config_toml: Path, indexed_home: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Core]:
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("SLACK_SIGNING_SECRET", SIGNING_SECRET)
    monkeypatch.setenv("CODECITE_SLACK_API_URL", slack.base_url)
    monkeypatch.setenv("CODECITE_CONFIG", str(config_toml))
    settings = Settings()
    shutil.copytree(indexed_home, settings.home)
    core = Core.from_settings(settings, load_file_config(config_toml))
    yield core
    core.close()


@pytest.fixture
def recorded(core: Core, monkeypatch: pytest.MonkeyPatch) -> Recorded:
    """Wrap `core.ask` to record its arguments and results (the real ask still runs)."""
    log = Recorded()
    real_ask = core.ask

    def ask(text: str, ctx: Context, conversation: Any = ()) -> Answer:
        log.asks.append((text, ctx, tuple(conversation)))
        answer = real_ask(text, ctx, conversation)
        log.answers.append(answer)
        return answer

    monkeypatch.setattr(core, "ask", ask)
    return log


@dataclass
class Running:
    bot: SlackBot
    server: SlackHTTPServer


def _run(core: Core) -> Running:
    bot = build_bot(core)
    return Running(bot, start_http(bot, host="127.0.0.1", port=0))


@pytest.fixture
def running(core: Core) -> Iterator[Running]:
    run = _run(core)
    yield run
    run.server.stop()
    run.bot.close()


@pytest.fixture
def start_app(core: Core) -> Iterator[Callable[[], Running]]:
    """Start extra app instances (same CODECITE_HOME), stopped at teardown."""
    started: list[Running] = []

    def start() -> Running:
        started.append(_run(core))
        return started[-1]

    yield start
    for run in started:
        run.server.stop()
        run.bot.close()


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

    def click(self, action_id: str, value: str, *, user: str, message: dict[str, Any]) -> int:
        response_url = self.slack.new_response_url()
        payload = {
            "type": "block_actions",
            "user": {"id": user, "team_id": TEAM_ID},
            "api_app_id": "A0APP",
            "team": {"id": TEAM_ID},
            "container": {"type": "message", "message_ts": message["ts"], "channel_id": CHANNEL},
            "trigger_id": f"trig.{next(self._ids)}",
            "channel": {"id": CHANNEL},
            "message": message,
            "response_url": response_url,
            "actions": [
                {
                    "type": "button",
                    "action_id": action_id,
                    "block_id": "codecite_feedback",
                    "value": value,
                    "action_ts": str(time.time()),
                }
            ],
        }
        body = urlencode({"payload": json.dumps(payload)})
        return self.post(body, "application/x-www-form-urlencoded")[0]


@pytest.fixture
def driver(slack: FakeSlack, running: Running) -> Driver:
    return Driver(slack, running.server.url())


def replies_in(slack: FakeSlack, channel: str, thread_ts: str) -> list[dict[str, Any]]:
    return [m for m in slack.bot_posts(channel) if m.get("thread_ts") == thread_ts]


class Gate:
    """Holds `core.ask` until released, so a test can look at what happened before the answer."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def wrap(self, ask: Callable[..., Answer]) -> Callable[..., Answer]:
        def gated(*args: Any, **kwargs: Any) -> Answer:
            self.entered.set()
            if not self.release.wait(timeout=30):
                raise AssertionError("gate never released")
            return ask(*args, **kwargs)

        return gated
