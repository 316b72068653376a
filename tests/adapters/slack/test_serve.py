"""serve_slack: Socket Mode against a local WebSocket server, HTTP mode, and refusals."""

from __future__ import annotations

import json
import logging
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import SecretStr

from adapters.slack import serve as serve_module
from adapters.slack.app import SlackBot, build_bot
from adapters.slack.handlers import WORKING
from adapters.slack.http_server import SlackHTTPServer
from adapters.slack.serve import resolve_port, serve_slack
from bot.config import Settings, load_settings
from bot.core import Core
from bot.errors import ConfigError
from tests.servers.slack_fake import APP_TOKEN, BOT_USER_ID, TEAM_ID, FakeSlack
from tests.servers.slack_socket_fake import FakeSocketMode
from tests.support.slack_driver import CHANNEL, event_body, replies_in

QUESTION = "where do we retry failed webhooks?"


ENV = {
    "slack_bot_token": "SLACK_BOT_TOKEN",
    "slack_app_token": "SLACK_APP_TOKEN",
    "slack_signing_secret": "SLACK_SIGNING_SECRET",
}


def _with(core: Core, monkeypatch: pytest.MonkeyPatch, **update: Any) -> None:
    """The Slack adapter reads its own settings from the environment when it starts."""
    for field, value in update.items():
        if value is None:
            monkeypatch.delenv(ENV[field], raising=False)
        else:
            monkeypatch.setenv(ENV[field], value.get_secret_value())


class Serving:
    """serve_slack in a thread, stopped (and joined) at teardown."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []

    def start(self, **kwargs: Any) -> None:
        kwargs["stop"] = self.stop
        thread = threading.Thread(target=serve_slack, args=(self.core,), kwargs=kwargs)
        thread.start()
        self.threads.append(thread)


@pytest.fixture
def serving(core: Core) -> Iterator[Serving]:
    run = Serving(core)
    yield run
    run.stop.set()
    for thread in run.threads:
        thread.join(timeout=15)
        assert not thread.is_alive()


def test_socket_mode_delivers_a_mention_and_acks_it(
    slack: FakeSlack, core: Core, serving: Serving, monkeypatch: pytest.MonkeyPatch
) -> None:
    _with(core, monkeypatch, slack_app_token=SecretStr(APP_TOKEN), slack_signing_secret=None)
    with FakeSocketMode() as socket:
        slack.socket_url = socket.url
        serving.start()
        msg = slack.add_message(CHANNEL, "UASKER", f"<@{BOT_USER_ID}> {QUESTION}")
        event = {"type": "app_mention", "user": "UASKER", "text": msg["text"], "ts": msg["ts"]}
        event["channel"] = CHANNEL
        envelope = socket.send("events_api", event_body(event, "EvSOCKET"))
        assert socket.wait_ack(envelope) == {"envelope_id": envelope}
        [reply] = slack.wait_for(lambda: replies_in(slack, CHANNEL, msg["ts"]))
        assert "shop/webhooks.py:L" in reply["text"]
        [opened] = slack.calls_to("apps.connections.open")
        assert opened.token == APP_TOKEN  # the app-level token, not the bot token


def test_socket_mode_slash_command_ack_carries_the_working_note(
    slack: FakeSlack, core: Core, serving: Serving, monkeypatch: pytest.MonkeyPatch
) -> None:
    _with(core, monkeypatch, slack_app_token=SecretStr(APP_TOKEN))
    with FakeSocketMode() as socket:
        slack.socket_url = socket.url
        serving.start()
        payload = {
            "team_id": TEAM_ID,
            "channel_id": CHANNEL,
            "user_id": "UASKER",
            "command": "/codecite",
            "text": f"ask {QUESTION}",
            "response_url": slack.new_response_url(),
            "trigger_id": "trig.socket",
        }
        envelope = socket.send("slash_commands", payload)
        ack = socket.wait_ack(envelope)
        assert ack["payload"]["text"] == WORKING
        slack.wait_for(lambda: slack.bot_posts(CHANNEL))


def test_a_wrong_app_token_is_a_config_error(
    slack: FakeSlack, core: Core, monkeypatch: pytest.MonkeyPatch
) -> None:
    _with(core, monkeypatch, slack_app_token=SecretStr("xapp-wrong"))
    slack.socket_url = "ws://127.0.0.1:9/unused"
    with pytest.raises(ConfigError, match="app token"):
        serve_slack(core, stop=threading.Event())


def test_http_mode_serves_signed_events(
    slack: FakeSlack, core: Core, serving: Serving, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[SlackHTTPServer] = []
    up = threading.Event()
    real_start = serve_module.start_http

    def start_http(bot: SlackBot, *, port: int, **kwargs: Any) -> SlackHTTPServer:
        server = real_start(bot, port=port, **{**kwargs, "host": "127.0.0.1"})
        started.append(server)
        up.set()
        return server

    monkeypatch.setattr(serve_module, "start_http", start_http)
    serving.start(port=0)
    assert up.wait(timeout=15)
    with urllib.request.urlopen(started[0].url("/healthz"), timeout=5) as resp:
        assert resp.status == 200
    body = json.dumps({"type": "url_verification", "challenge": "c1", "token": "t"})
    request = urllib.request.Request(started[0].url(), data=body.encode(), method="POST")
    request.add_header("Content-Type", "application/json")
    with pytest.raises(urllib.error.HTTPError) as refused:  # unsigned
        urllib.request.urlopen(request, timeout=5)
    assert refused.value.code == 401


def test_http_mode_needs_the_signing_secret(core: Core, monkeypatch: pytest.MonkeyPatch) -> None:
    _with(core, monkeypatch, slack_signing_secret=None, slack_app_token=None)
    with pytest.raises(ConfigError, match="SLACK_SIGNING_SECRET"):
        serve_slack(core, port=0, stop=threading.Event())


def test_port_comes_from_the_flag_then_port_then_3000(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PORT", raising=False)
    assert resolve_port(None, Settings()) == 3000
    monkeypatch.setenv("PORT", "8080")
    assert resolve_port(None, Settings()) == 8080
    assert resolve_port(9000, Settings()) == 9000
    monkeypatch.setenv("PORT", "http")
    with pytest.raises(ConfigError, match="PORT"):
        resolve_port(None, load_settings())


def test_a_refused_bot_token_is_a_config_error(
    slack: FakeSlack, core: Core, monkeypatch: pytest.MonkeyPatch
) -> None:
    _with(core, monkeypatch, slack_bot_token=SecretStr("xoxb-revoked"))
    with pytest.raises(ConfigError, match="bot token"):
        build_bot(core)
    assert [c.error for c in slack.calls] == ["invalid_auth"]


def test_a_start_logs_nothing_about_an_unused_token(
    slack: FakeSlack, core: Core, caplog: pytest.LogCaptureFixture
) -> None:
    """SLACK_BOT_TOKEN is in the environment, as in every deployment: Bolt is given it and
    builds its client from it, so it has nothing to warn about; the token is checked once."""
    with caplog.at_level(logging.INFO):
        bot = build_bot(core)
    bot.close()
    noise = [r.getMessage() for r in caplog.records if r.name.startswith("slack_bolt")]
    assert not [m for m in noise if "token" in m], noise
    assert [c.method for c in slack.calls] == ["auth.test"]
    assert slack.calls[0].ok


def test_a_missing_bot_token_is_a_config_error(core: Core, monkeypatch: pytest.MonkeyPatch) -> None:
    _with(core, monkeypatch, slack_bot_token=None)
    with pytest.raises(ConfigError, match="SLACK_BOT_TOKEN"):
        build_bot(core)


HOOK_SECRET = "hook-secret"


def _captured(monkeypatch: pytest.MonkeyPatch, name: str) -> tuple[list[Any], threading.Event]:
    """Wrap serve_module.<name> (start_http / start_web) to learn the port it bound."""
    started: list[Any] = []
    up = threading.Event()
    real = getattr(serve_module, name)

    def start(*args: Any, **kwargs: Any) -> Any:
        server = real(*args, **{**kwargs, "host": "127.0.0.1"})
        started.append(server)
        up.set()
        return server

    monkeypatch.setattr(serve_module, name, start)
    return started, up


def _get(port: int, path: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _signed_ping(port: int) -> tuple[int, Any]:
    import hashlib
    import hmac

    body = b"{}"
    digest = hmac.new(HOOK_SECRET.encode(), body, hashlib.sha256).hexdigest()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/webhooks/github",
        data=body,
        method="POST",
        headers={"X-GitHub-Event": "ping", "X-Hub-Signature-256": f"sha256={digest}"},
    )
    with urllib.request.urlopen(request, timeout=5) as resp:
        return resp.status, json.loads(resp.read())


def _push_routes(core: Core) -> list[Any]:
    from adapters.webhook import QueuedReindex, webhook_route

    return [webhook_route(QueuedReindex(core), HOOK_SECRET)]


def test_socket_mode_binds_the_port_for_health_readiness_and_webhooks(
    slack: FakeSlack, core: Core, serving: Serving, monkeypatch: pytest.MonkeyPatch
) -> None:
    _with(core, monkeypatch, slack_app_token=SecretStr(APP_TOKEN), slack_signing_secret=None)
    started, up = _captured(monkeypatch, "start_web")
    with FakeSocketMode() as socket:
        slack.socket_url = socket.url
        serving.start(port=0, routes=_push_routes(core))
        assert up.wait(timeout=15)
        port = started[0].port
        assert _get(port, "/healthz") == (200, b"ok")
        assert _get(port, "/readyz") == (200, b"ready")
        assert _signed_ping(port) == (200, {"ok": True})
        # Events arrive on the WebSocket: no Slack route on the port in Socket Mode.
        assert _get(port, "/slack/events")[0] == 404
        # ...and they are still answered.
        msg = slack.add_message(CHANNEL, "UASKER", f"<@{BOT_USER_ID}> {QUESTION}")
        event = {"type": "app_mention", "user": "UASKER", "text": msg["text"], "ts": msg["ts"]}
        envelope = socket.send("events_api", event_body({**event, "channel": CHANNEL}, "EvP"))
        assert socket.wait_ack(envelope) == {"envelope_id": envelope}


def test_socket_mode_binds_nothing_without_a_port(
    slack: FakeSlack, core: Core, serving: Serving, monkeypatch: pytest.MonkeyPatch
) -> None:
    _with(core, monkeypatch, slack_app_token=SecretStr(APP_TOKEN), slack_signing_secret=None)
    started, _ = _captured(monkeypatch, "start_web")
    with FakeSocketMode() as socket:
        slack.socket_url = socket.url
        serving.start()  # no --port, and the core's settings have no $PORT
        envelope = socket.send("events_api", event_body({"type": "app_mention"}, "EvQ"))
        socket.wait_ack(envelope)  # connected and serving
    assert core.settings.port is None and started == []


def test_http_mode_shares_its_port_with_health_readiness_and_webhooks(
    slack: FakeSlack, core: Core, serving: Serving, monkeypatch: pytest.MonkeyPatch
) -> None:
    started, up = _captured(monkeypatch, "start_http")
    serving.start(port=0, routes=_push_routes(core))
    assert up.wait(timeout=15)
    port = started[0].port
    assert _get(port, "/healthz") == (200, b"ok")
    assert _get(port, "/readyz") == (200, b"ready")
    assert _signed_ping(port) == (200, {"ok": True})
    body = json.dumps({"type": "url_verification", "challenge": "c1", "token": "t"}).encode()
    request = urllib.request.Request(started[0].url(), data=body, method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:  # unsigned, as before
        urllib.request.urlopen(request, timeout=5)
    assert refused.value.code == 401
