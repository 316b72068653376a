"""`codecite serve --slack`: Socket Mode when SLACK_APP_TOKEN is set, else HTTP mode.

HTTP mode listens on `port` (default $PORT, else 3000) at /slack/events and
needs SLACK_SIGNING_SECRET. Both modes stop on SIGINT/SIGTERM (or `stop`),
finishing the answers already accepted.
"""

from __future__ import annotations

import logging
import signal
import threading

from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_sdk.errors import SlackApiError, SlackClientError

from adapters.slack.app import SlackBot, build_bot
from adapters.slack.http_server import EVENTS_PATH, SlackHTTPServer
from adapters.slack.settings import SlackSettings
from bot.config import Settings
from bot.core import Core
from bot.errors import ConfigError, ServiceUnavailable

log = logging.getLogger(__name__)

DEFAULT_PORT = 3000


def serve_slack(
    core: Core,
    *,
    port: int | None = None,
    stop: threading.Event | None = None,
    settings: SlackSettings | None = None,
) -> None:
    """Run the Slack adapter until a signal (or `stop`) arrives. Blocking."""
    settings = settings or SlackSettings.load()
    socket_mode = settings.app_token is not None
    if not socket_mode and settings.signing_secret is None:
        raise ConfigError(
            "Set SLACK_APP_TOKEN for Socket Mode, or SLACK_SIGNING_SECRET for HTTP mode."
        )
    stop = stop or threading.Event()
    _stop_on_signals(stop)
    bot = build_bot(core, settings=settings)
    try:
        if settings.app_token is not None:
            handler = start_socket_mode(bot, settings.app_token.get_secret_value())
            log.info("Slack adapter connected in Socket Mode")
            _wait(stop)
            handler.client.close()
        else:
            server = start_http(bot, port=resolve_port(port, core.settings))
            log.info(
                "Slack adapter listening on port %d at %s (HTTP mode)", server.port, EVENTS_PATH
            )
            _wait(stop)
            server.stop()
    finally:
        bot.close()


def start_socket_mode(bot: SlackBot, app_token: str) -> SocketModeHandler:
    """Open the Socket Mode connection (apps.connections.open, then the WebSocket)."""
    if not app_token.startswith("xapp-"):
        raise ConfigError("SLACK_APP_TOKEN must be an app-level token (xapp-...).")
    handler = SocketModeHandler(bot.app, app_token)
    try:
        handler.client.connect()
    except SlackApiError as exc:
        handler.client.close()
        raise ConfigError("Slack refused the app token (apps.connections.open failed).") from exc
    except (SlackClientError, OSError) as exc:
        handler.client.close()
        raise ServiceUnavailable("Slack could not be reached for Socket Mode.") from exc
    return handler


def start_http(bot: SlackBot, *, port: int, host: str = "0.0.0.0") -> SlackHTTPServer:  # noqa: S104
    try:
        server = SlackHTTPServer(bot.app, host=host, port=port)
    except OSError as exc:
        raise ConfigError(f"Cannot listen on port {port}: {exc.strerror}.") from exc
    server.start()
    return server


def resolve_port(port: int | None, settings: Settings) -> int:
    """The --port flag, else $PORT (the platform convention: Heroku, Render...), else 3000."""
    if port is not None:
        return port
    return settings.port if settings.port is not None else DEFAULT_PORT


def _stop_on_signals(stop: threading.Event) -> None:
    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers can only be installed from the main thread
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())


def _wait(stop: threading.Event) -> None:
    try:
        stop.wait()
    except KeyboardInterrupt:
        stop.set()
