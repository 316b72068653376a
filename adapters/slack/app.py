"""Wiring: a Bolt App whose listeners call the Core, and its Web API client.

`build_bot` returns the App with what must be closed on shutdown (its pending
answers and the event store); `build_app` is the App alone, for callers that only
dispatch requests.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from slack_bolt import App, BoltResponse
from slack_bolt.middleware.authorization import SingleTeamAuthorization
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.builtin_handlers import (
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)
from slack_sdk.web import SlackResponse

from adapters.common.dedupe import EventDedupe
from adapters.slack.assistant import SlackAssistant
from adapters.slack.assistant_pane import STATUS_INTERVAL
from adapters.slack.handlers import SlackHandlers
from adapters.slack.intake import Intake
from adapters.slack.settings import SlackSettings
from bot.core import Core
from bot.errors import ConfigError, ServiceUnavailable
from bot.runtime.queue import QueueClosed

log = logging.getLogger(__name__)

DEFAULT_API_URL = "https://slack.com/api/"
LISTENER_THREADS = 16  # acks and quick work only; answers run in the core's AnswerQueue
API_TIMEOUT = 30


@dataclass(frozen=True, slots=True)
class SlackBot:
    app: App
    handlers: SlackHandlers
    listeners: ThreadPoolExecutor
    assistant: SlackAssistant
    intake: Intake

    def close(self) -> None:
        """Finish the answers already accepted, then release the pool and the event store."""
        self.listeners.shutdown(wait=True)
        self.intake.close()
        self.assistant.close()
        self.handlers.close()  # closes the event store both share


def configure_client(client: WebClient, settings: SlackSettings) -> WebClient:
    """Our Web API settings on the App's client: the base URL (CODECITE_SLACK_API_URL), a
    timeout, and bounded retries of 429 (after Retry-After), 5xx and dropped connections."""
    base_url = settings.api_url or DEFAULT_API_URL
    client.base_url = base_url if base_url.endswith("/") else base_url + "/"
    client.timeout = API_TIMEOUT
    client.retry_handlers.append(RateLimitErrorRetryHandler(max_retry_count=2))
    client.retry_handlers.append(ServerErrorRetryHandler(max_retry_count=2))
    return client


def build_bot(
    core: Core,
    *,
    settings: SlackSettings | None = None,
    status_interval: float = STATUS_INTERVAL,
) -> SlackBot:
    """`status_interval`: seconds between two updates of the pane's status line."""
    settings = settings or SlackSettings.load()
    if settings.bot_token is None:
        raise ConfigError("SLACK_BOT_TOKEN is not set; the Slack adapter needs the bot token.")
    secret = settings.signing_secret
    # Without a secret no HTTP request may pass verification: sign with a random one.
    signing_secret = secret.get_secret_value() if secret else secrets.token_hex(32)
    listeners = ThreadPoolExecutor(max_workers=LISTENER_THREADS, thread_name_prefix="slack-listen")
    # Bolt builds its Web API client from the token we give it. Handed a client of ours
    # instead, it would still read SLACK_BOT_TOKEN from the environment and warn at every
    # start that the token goes unused. Its client is configured before any call (so Bolt's
    # own check of the token, made before that, is off) and the token is checked just after.
    app = App(
        name="codecite",
        token=settings.bot_token.get_secret_value(),
        signing_secret=signing_secret,
        listener_executor=listeners,
        token_verification_enabled=False,
    )
    client = configure_client(app.client, settings)
    try:
        identity = client.auth_test()
    except SlackApiError as exc:
        listeners.shutdown()
        raise ConfigError("Slack refused the bot token (auth.test failed).") from exc
    except (SlackClientError, OSError) as exc:
        listeners.shutdown()
        raise ServiceUnavailable("Slack could not be reached; is the network up?") from exc
    _authorized(app, identity)
    app.use(refused_while_stopping(core))
    dedupe = EventDedupe(core.event_claims())  # one claim per message, whoever answers it
    intake = Intake()
    handlers = SlackHandlers(core, client, dedupe=dedupe, intake=intake)
    handlers.register(app)
    # The AI-app pane (Agents & AI Apps): its threads only; every other DM reaches `handlers`.
    assistant = SlackAssistant(
        core,
        client,
        dedupe=dedupe,
        conversations=handlers.conversations,
        intake=intake,
        others=handlers.take_event,
        status_interval=status_interval,
    )
    assistant.register(app)
    return SlackBot(
        app=app, handlers=handlers, listeners=listeners, assistant=assistant, intake=intake
    )


def refused_while_stopping(core: Core) -> Callable[..., BoltResponse]:
    """Bolt middleware: while the process stops (`Core.draining`) an event is answered 503,
    unclaimed, so Slack delivers it again (to a replica, or to this bot once it is back);
    a slash command is told in one line that codecite is restarting; a click is
    acknowledged and left. Everything else goes on as usual."""

    def middleware(body: dict[str, Any], next: Callable[[], BoltResponse]) -> BoltResponse:
        if not core.draining:
            return next()
        if body.get("type") == "event_callback":
            return BoltResponse(status=503, body="restarting")
        if body.get("command"):
            return BoltResponse(
                status=200, body={"response_type": "ephemeral", "text": QueueClosed.user_message}
            )
        if body.get("type") in ("block_actions", "view_submission"):
            return BoltResponse(status=200, body="")
        return next()

    return middleware


def _authorized(app: App, identity: SlackResponse) -> None:
    """Hand our `auth.test` to Bolt's authorization, which would otherwise make that call
    itself on the first request, before acknowledging it (a rate limit there would hold
    that acknowledgement for its Retry-After). Bolt takes the result only as a constructor
    argument of the middleware it builds; `token_verification_enabled=False` (see above)
    left it empty."""
    for middleware in app._middleware_list:
        if isinstance(middleware, SingleTeamAuthorization) and not middleware.auth_test_result:
            middleware.auth_test_result = identity


def build_app(core: Core, *, settings: SlackSettings | None = None) -> App:
    return build_bot(core, settings=settings).app
