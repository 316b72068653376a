"""HTTP mode: Slack's requests fed to the Bolt App, as a route of the process's HTTP server.

Bolt's own `App.start()` server handles one request at a time, so a slow
request would delay every acknowledgement behind it; the routed server
(adapters/common/http_routes.py) gives each connection its own thread, up to
`HTTPLimits.max_connections` (see adapters/common/http_limits.py for the timeouts
and budgets a client lives under). `slack_route` is the events route; the
process puts it beside `/healthz`, `/readyz` and push webhooks on one port.
`SlackHTTPServer` is that server with the Slack route and health alone.

A POST to the events path is judged in this order, each step before the next
is paid for: framing (Content-Length: 400/411/413), then the signing headers
(timestamp within 5 minutes, `v0=` signature shape: 401), and only then is the
body read (a stall: 408; a short body: 400) and its HMAC checked (401). An
unauthenticated request never reaches Bolt, and nothing of its body is logged.
A signed body that is not JSON or a form Bolt can read gets 400.
`GET /healthz` answers 200 for load balancers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from urllib.parse import parse_qsl

from slack_bolt import App, BoltContext, BoltRequest, BoltResponse
from slack_bolt.request.internals import build_context

from adapters.common.http_handler import TEXT, GuardedHandler
from adapters.common.http_limits import HTTPLimits, Refusal, describe_body
from adapters.common.http_routes import HEALTH_PATH, Route, RoutedServer, health_routes
from adapters.slack.verify import header_refusal, signature_matches, withhold_bolt_body_log

log = logging.getLogger(__name__)

__all__ = ["EVENTS_PATH", "HEALTH_PATH", "MAX_BODY", "SlackHTTPServer", "slack_route"]

EVENTS_PATH = "/slack/events"
FORM = "application/x-www-form-urlencoded"
MAX_BODY = HTTPLimits().max_body
LABEL = "slack http"  # how its log lines name this server


class SlackHTTPServer(RoutedServer):
    """The Slack route and the health routes on one port (HTTP mode on its own)."""

    def __init__(
        self,
        app: App,
        *,
        host: str = "0.0.0.0",  # noqa: S104 -- Slack must reach it; requests are signed
        port: int = 3000,
        path: str = EVENTS_PATH,
        signing_secret: str | None = None,
        limits: HTTPLimits | None = None,
        routes: Sequence[Route] = (),
        readiness: Callable[[], str] = lambda: "",
    ) -> None:
        route = slack_route(app, path, signing_secret=signing_secret)
        super().__init__(
            [*health_routes(readiness), route, *routes],
            host=host,
            port=port,
            limits=limits,
            label=LABEL,
        )

    def url(self, path: str = EVENTS_PATH) -> str:
        return super().url(path)


def _app_secret(app: App) -> str:
    # Bolt keeps the secret it verifies with but offers no public accessor; verifying with
    # that very value keeps our check and Bolt's in agreement.
    secret = app._signing_secret
    if not isinstance(secret, str) or not secret:
        raise ValueError("the Bolt App has no signing secret")
    return secret


def slack_route(app: App, path: str = EVENTS_PATH, *, signing_secret: str | None = None) -> Route:
    """`POST path`: Slack's events, slash commands and interactivity, verified, then to Bolt."""
    withhold_bolt_body_log()
    secret = (signing_secret or _app_secret(app)).encode("utf-8")

    def handle(request: GuardedHandler, query: str) -> None:
        length = request.body_length()
        if length is None:
            return
        timestamp = request.headers.get("X-Slack-Request-Timestamp")
        signature = request.headers.get("X-Slack-Signature")
        reason = header_refusal(timestamp, signature)
        if reason is not None or timestamp is None or signature is None:
            request.refuse(Refusal(401, reason or "unsigned"), f"{length} bytes declared")
            return
        raw = request.read_body(length)
        if raw is None:
            return
        if not signature_matches(secret, timestamp, raw, signature):
            request.refuse(Refusal(401, "signature mismatch"), describe_body(raw))
            return
        bolt_request = _bolt_request(raw, query, _header_lists(request))
        if isinstance(bolt_request, Refusal):
            request.refuse(bolt_request, describe_body(raw))
            return
        _dispatch(app, request, bolt_request)

    return Route("POST", path, handle)


def _header_lists(request: GuardedHandler) -> dict[str, str | Sequence[str]]:
    headers = request.headers
    return {k.lower(): headers.get_all(k) or [] for k in set(headers.keys())}


def _dispatch(app: App, request: GuardedHandler, bolt_request: BoltRequest) -> None:
    try:
        response: BoltResponse = app.dispatch(bolt_request)
    except Exception:  # Bolt handles listener errors; this is a fault of ours or Bolt's
        log.exception("%s: Bolt could not dispatch a signed request", LABEL)
        request.send(500, "internal error", TEXT)
        return
    request.send(response.status, response.body, response.headers)


def _bolt_request(
    raw: bytes, query: str, headers: dict[str, str | Sequence[str]]
) -> BoltRequest | Refusal:
    """The signed body as Bolt reads it; 400 unless it is UTF-8 JSON or a form Bolt can read."""
    try:
        request = BoltRequest(body=raw.decode("utf-8"), query=query, headers=headers)
    except (ValueError, TypeError, AttributeError, KeyError, IndexError, RecursionError):
        # Not JSON, not UTF-8, a shape Bolt cannot read, or nested too deep to parse.
        return Refusal(400, "body is not a Slack payload")
    if not isinstance(request.body, dict):
        return Refusal(400, "body is not a Slack payload")
    _read_form_fields(request)
    return request


def _read_form_fields(request: BoltRequest) -> None:
    """Bolt takes any form that mentions "payload" for a button's `payload=` form and reads
    one that has none as {}, so `/codecite ask how is the webhook payload signed?` got a
    404 and no answer. Such a form is what its fields say."""
    if request.content_type != FORM or "payload" not in request.raw_body:
        return
    fields = dict(parse_qsl(request.raw_body, keep_blank_values=True))
    if "payload" not in fields:
        request.body = fields
        request.context = build_context(BoltContext(), fields)
