"""`codecite serve` and `codecite schedule`: the long-running processes.

`serve` starts the chat adapters the environment is configured for (with no
flag, every adapter whose token is set) and, unless told not to, the
re-ingest scheduler. With both adapters, Slack runs in a thread and Discord
owns the main thread's event loop; if the Slack thread dies, the process is
asked to stop (SIGTERM) so that its supervisor restarts it whole rather than
leaving half a bot running. `schedule` runs only the scheduler, for a separate
worker process.

Each process has at most one HTTP server (adapters/common/http_routes.py):
`GET /healthz`, `GET /readyz`, and with CODECITE_WEBHOOK_SECRET `POST
/webhooks/github`; Slack's HTTP mode adds `/slack/events`. Its port:

- `serve`, Slack in HTTP mode: `--port`, else `$PORT`, else 3000;
- `serve`, Socket Mode or Discord: `--port`, else `$PORT`; else, when the scheduler
  runs here and the secret is set, the webhook port (`--webhook-port`,
  `CODECITE_WEBHOOK_PORT`, 8787); else no server;
- `schedule`: `--webhook-port`, else `$PORT`, else the webhook port when the secret
  is set; else no server.

Who ingests: a push or a chat `reindex` only records a job (`bot.jobs`), in whichever
process receives it; the process that runs the scheduler (`schedule`, or `serve`
without --no-schedule, even with no repositories configured) also runs the job runner,
which claims those jobs and ingests. Scheduled interval runs and the boot pass ingest
directly in the scheduler's process. So the Procfile's `web` (`serve --no-schedule`)
never ingests, and its `scheduler` does all of it.

Each of those ingests runs in a child process at lower CPU priority
(`bot.jobs.offload`): in `serve` the one-process default answers at idle speed while the
standard library is indexed beside it; in `schedule` too, so that what an ingest held
(hundreds of MB for a large repository) goes back to the system when it ends, and a
scheduler between ingests is the size of an idle one. Stopping (SIGTERM, Ctrl-C) cancels
those children first; what they had not committed is not in the index, and the next run
starts it again.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from adapters.common.http_routes import Route, RoutedServer, health_routes, start_routed
from adapters.webhook import QueuedReindex, webhook_route
from bot.core import Core
from bot.errors import ConfigError
from bot.runtime import metrics

if TYPE_CHECKING:  # APScheduler is loaded only where the scheduler runs
    from adapters.schedule import IngestScheduler

log = logging.getLogger(__name__)

STOP_POLL_SECONDS = 0.2  # how soon a received SIGTERM starts the stop
STOP_JOIN_SECONDS = 60.0  # for a stopping adapter's thread (the drain itself is bounded)


def serve(
    core: Core,
    *,
    slack: bool = False,
    discord: bool = False,
    port: int | None = None,
    schedule: bool = True,
    webhook_port: int | None = None,
) -> int:
    slack, discord = _adapters(core, slack, discord)
    _measured(core)
    web_port = port if port is not None else core.settings.port
    has_web = web_port is not None or (slack and _slack_http_mode())
    with _ingests(core, enabled=schedule) as scheduler:
        routes = push_routes(core)
        fallback = None if has_web or scheduler is None else _webhook_port(core, webhook_port)
        # The Slack adapter binds the web port itself (adding its events route in HTTP
        # mode); without Slack it is bound here. Either way, one server per process.
        own = None if slack else web_port
        listen = own if own is not None else fallback
        with _listening([*health_routes(core.readiness), *routes], listen), _stopping(core) as stop:
            if slack and discord:
                from adapters.discord.serve import serve_discord
                from adapters.slack.serve import serve_slack

                thread = threading.Thread(
                    target=_stop_process_when_done,
                    args=(
                        lambda: serve_slack(core, port=port, routes=routes, stop=stop),
                        "Slack",
                        stop,
                    ),
                    name="slack",
                    daemon=True,
                )
                thread.start()
                serve_discord(core, stop=stop)
                thread.join(timeout=STOP_JOIN_SECONDS)
            elif slack:
                from adapters.slack.serve import serve_slack

                serve_slack(core, port=port, routes=routes, stop=stop)
            else:
                from adapters.discord.serve import serve_discord

                serve_discord(core, stop=stop)
    return 0


@contextmanager
def _stopping(core: Core) -> Iterator[threading.Event]:
    """The process's stop: at SIGTERM (or SIGINT) the answers drain within their deadline
    (`Core.drain`: readiness fails first, no new question, the rest end with one line),
    and only then is the event set that the adapters stop on; their server stays up
    meanwhile. The handlers only record the signal (see `run_scheduler`)."""
    stop = threading.Event()
    received: list[int] = []
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, lambda signum, _frame: received.append(signum))

    def watch() -> None:
        while not received and not stop.is_set():
            time.sleep(STOP_POLL_SECONDS)
        if received:
            log.info("%s received: stopping", signal.Signals(received[0]).name)
            core.drain()
        stop.set()

    watcher = threading.Thread(target=watch, name="stopping", daemon=True)
    watcher.start()
    try:
        yield stop
    finally:
        stop.set()
        watcher.join(timeout=STOP_JOIN_SECONDS)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def push_routes(core: Core) -> list[Route]:
    """The push-webhook route when CODECITE_WEBHOOK_SECRET is set (else none)."""
    secret = core.settings.webhook_secret
    if secret is None:
        return []
    return [webhook_route(QueuedReindex(core), secret.get_secret_value())]


def _stop_process_when_done(run: Callable[[], None], name: str, stop: threading.Event) -> None:
    try:
        run()
        if stop.is_set():
            return  # the process is stopping: that is why
        log.error("the %s adapter stopped; stopping the process", name)
    except BaseException:
        log.exception("the %s adapter failed; stopping the process", name)
    os.kill(os.getpid(), signal.SIGTERM)


def run_scheduler(core: Core, *, webhook_port: int | None = None) -> int:
    if not core.config.repos:
        raise ConfigError("No repositories to schedule: list them as [[repos]] in codecite.toml.")
    # The handler only records the signal: taking a lock inside a signal handler (as
    # Event.set does) can leave the main thread stuck, and the process never stops.
    received: list[int] = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda signum, _frame: received.append(signum))
    _measured(core)
    with _ingests(core, enabled=True):  # stopping: ingests cancelled, their jobs left to others
        routes = push_routes(core)
        port = webhook_port if webhook_port is not None else core.settings.port
        if port is None and routes:
            port = core.settings.webhook_port
        with _listening([*health_routes(core.readiness), *routes], port):
            while not received:
                time.sleep(STOP_POLL_SECONDS)
            core.drain(grace=0.0)  # readiness fails at once; the scheduler answers nothing
    return 0


def _measured(core: Core) -> None:
    """This process's metrics (served at /metrics), the Core's gauges among them."""
    metrics.enable()
    metrics.gauges(core.gauges)


def _adapters(core: Core, slack: bool, discord: bool) -> tuple[bool, bool]:
    """Which adapters to run; their configuration is checked here, before anything starts,
    so that a mistake is the one line the process prints."""
    from adapters.discord.settings import DiscordSettings, discord_config
    from adapters.slack.settings import SlackSettings

    slack_settings = SlackSettings.load()
    slack_token = slack_settings.bot_token
    discord_token = DiscordSettings.load().token
    if not slack and not discord:
        slack = slack_token is not None
        discord = discord_token is not None
    if not slack and not discord:
        raise ConfigError(
            "Nothing to serve: set SLACK_BOT_TOKEN (Slack) or DISCORD_TOKEN (Discord)."
        )
    if slack and slack_token is None:
        raise ConfigError("SLACK_BOT_TOKEN is not set.")
    if discord and discord_token is None:
        raise ConfigError("DISCORD_TOKEN is not set.")
    if slack:
        slack_settings.require_mode()
    if discord:
        discord_config(core)  # [discord] of codecite.toml
    return slack, discord


def _slack_http_mode() -> bool:
    from adapters.slack.settings import SlackSettings

    return SlackSettings.load().app_token is None


def _webhook_port(core: Core, flag: int | None) -> int | None:
    """Where push webhooks go in a process with no web port: only with the secret set."""
    if core.settings.webhook_secret is None:
        return None
    return flag if flag is not None else core.settings.webhook_port


@contextmanager
def _listening(routes: list[Route], port: int | None) -> Iterator[RoutedServer | None]:
    """The process's HTTP server on `port` for the body of the `with` (none for None)."""
    if port is None:
        yield None
        return
    server = start_routed(routes, port=port)
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def _ingests(core: Core, *, enabled: bool) -> Iterator[IngestScheduler | None]:
    """The re-ingest scheduler (when codecite.toml lists repositories) and the runner of
    recorded jobs (with or without configured repositories: a chat `reindex` of an indexed
    one still needs it), for the body of the `with`; none unless `enabled`.

    Every ingest runs in a child process at lower priority, so answers keep this
    interpreter and its memory returns when the ingest ends; set before the scheduler's
    boot pass can start one.
    At the end those children are cancelled first (the index stays as it was, and the
    runs say so), so that stopping never waits for a long ingest; jobs they ran are left
    to the next runner's lease. In-thread ingests under way finish (heartbeating).
    """
    if not enabled:
        yield None
        return
    from adapters.schedule import IngestScheduler

    stop_children = core.ingest_in_children()
    scheduler = IngestScheduler(core) if core.config.repos else None
    runner = core.job_runner()
    try:
        if scheduler is not None:
            scheduler.install()
            scheduler.start()
        runner.start()
        core.rebuild_when_damaged()  # a damaged index file is rebuilt by whoever ingests
        yield scheduler
    finally:
        stop_children()
        runner.stop()
        if scheduler is not None:
            scheduler.shutdown()
