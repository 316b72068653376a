"""`codecite serve --slack`: Socket Mode when SLACK_APP_TOKEN is set, else HTTP mode.

HTTP mode listens on `port` (default $PORT, else 3000) at /slack/events and
needs SLACK_SIGNING_SECRET. Socket Mode listens on `port` (else $PORT) too, for
the platform's router and health checks, and on nothing when neither is given.
Either way that one server carries `/healthz`, `/readyz` and the `routes` the
process adds (push webhooks). Both modes stop on SIGINT/SIGTERM (or `stop`),
finishing the answers already accepted.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable, Sequence

from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_sdk.errors import SlackApiError, SlackClientError

from adapters.common.http_routes import ANY_HOST, Route, RoutedServer, health_routes, start_routed
from adapters.slack.app import SlackBot, build_bot
from adapters.slack.http_server import EVENTS_PATH, SlackHTTPServer
from adapters.slack.settings import SlackSettings
from bot.config import Settings
from bot.core import Core
from bot.errors import ConfigError, ServiceUnavailable

log = logging.getLogger(__name__)

DEFAULT_PORT = 3000
SIGNAL_POLL_SECONDS = 0.2  # how soon a signal's handler runs while the adapter waits


def serve_slack(
    core: Core,
    *,
    port: int | None = None,
    stop: threading.Event | None = None,
    settings: SlackSettings | None = None,
    routes: Sequence[Route] = (),
) -> None:
    """Run the Slack adapter until a signal (or `stop`, whose caller then owns the signals)
    arrives, then stop within the deadline (`Core.drain`): the server stays up while the
    answers under way finish, so events that arrive meanwhile are refused politely, not at
    the socket. Blocking."""
    settings = settings or SlackSettings.load()
    settings.require_mode()
    if stop is None:
        stop = threading.Event()
        _stop_on_signals(stop)
    bot = build_bot(core, settings=settings)
    server: RoutedServer | None = None
    try:
        if settings.app_token is not None:
            handler = start_socket_mode(bot, settings.app_token.get_secret_value())
            log.info("Slack adapter connected in Socket Mode")
            listen = port if port is not None else core.settings.port
            if listen is not None:
                server = start_web([*health_routes(core.readiness), *routes], port=listen)
            _wait(stop)
            core.drain()
            handler.client.close()
        else:
            listen = resolve_port(port, core.settings)
            server = start_http(bot, port=listen, routes=routes, readiness=core.readiness)
            log.info(
                "Slack adapter listening on port %d at %s (HTTP mode)", server.port, EVENTS_PATH
            )
            _wait(stop)
            core.drain()
    finally:
        if server is not None:
            server.stop()
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


def start_http(
    bot: SlackBot,
    *,
    port: int,
    host: str = ANY_HOST,
    routes: Sequence[Route] = (),
    readiness: Callable[[], str] = lambda: "",
) -> SlackHTTPServer:
    """HTTP mode's server: Slack's events beside health, readiness and `routes`."""
    try:
        server = SlackHTTPServer(bot.app, host=host, port=port, routes=routes, readiness=readiness)
    except OSError as exc:
        raise ConfigError(f"Cannot listen on port {port}: {exc.strerror}.") from exc
    server.start()
    return server


def start_web(routes: Sequence[Route], *, port: int, host: str = ANY_HOST) -> RoutedServer:
    """Socket Mode's server: no Slack route (events arrive on the WebSocket), the rest."""
    return start_routed(routes, port=port, host=host)


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
    # In short waits: a signal the kernel hands to another thread does not wake a main
    # thread blocked in one long wait, and Python runs handlers only on the main thread.
    try:
        while not stop.wait(SIGNAL_POLL_SECONDS):
            pass
    except KeyboardInterrupt:
        stop.set()
