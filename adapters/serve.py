"""`codecite serve` and `codecite schedule`: the long-running processes.

`serve` starts the chat adapters the environment is configured for (with no
flag, every adapter whose token is set) and, unless told not to, the
re-ingest scheduler and the push-webhook receiver. With both adapters, Slack
runs in a thread and Discord owns the main thread's event loop; if the Slack
thread dies, the process is asked to stop (SIGTERM) so that its supervisor
restarts it whole rather than leaving half a bot running. `schedule` runs
only the scheduler (and webhooks), for a separate worker process.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from bot.core import Core
from bot.errors import ConfigError

log = logging.getLogger(__name__)


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
    with _background_ingest(core, enabled=schedule, webhook_port=webhook_port):
        if slack and discord:
            from adapters.discord.serve import serve_discord
            from adapters.slack.serve import serve_slack

            thread = threading.Thread(
                target=_stop_process_when_done,
                args=(lambda: serve_slack(core, port=port), "Slack"),
                name="slack",
                daemon=True,
            )
            thread.start()
            serve_discord(core)
        elif slack:
            from adapters.slack.serve import serve_slack

            serve_slack(core, port=port)
        else:
            from adapters.discord.serve import serve_discord

            serve_discord(core)
    return 0


def _stop_process_when_done(run: Callable[[], None], name: str) -> None:
    try:
        run()
        log.error("the %s adapter stopped; stopping the process", name)
    except BaseException:
        log.exception("the %s adapter failed; stopping the process", name)
    os.kill(os.getpid(), signal.SIGTERM)


def run_scheduler(core: Core, *, webhook_port: int | None = None) -> int:
    if not core.config.repos:
        raise ConfigError("No repositories to schedule: list them as [[repos]] in codecite.toml.")
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    with _background_ingest(core, enabled=True, webhook_port=webhook_port):
        stop.wait()
    return 0


def _adapters(core: Core, slack: bool, discord: bool) -> tuple[bool, bool]:
    from adapters.discord.settings import DiscordSettings
    from adapters.slack.settings import SlackSettings

    slack_token = SlackSettings.load().bot_token
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
    return slack, discord


@contextmanager
def _background_ingest(core: Core, *, enabled: bool, webhook_port: int | None) -> Iterator[None]:
    """The scheduler (when codecite.toml lists repositories) and, with a secret, webhooks."""
    if not enabled or not core.config.repos:
        yield
        return
    from adapters.schedule import IngestScheduler
    from adapters.webhook import WebhookServer

    scheduler = IngestScheduler(core)
    scheduler.install()
    scheduler.start()
    webhooks = None
    secret = core.settings.webhook_secret
    if secret is not None:
        port = webhook_port if webhook_port is not None else core.settings.webhook_port
        webhooks = WebhookServer(scheduler, secret.get_secret_value(), port=port)
        webhooks.start()
    try:
        yield
    finally:
        if webhooks is not None:
            webhooks.stop()
        scheduler.shutdown()
