"""HTTP mode: a small threaded server that feeds Slack's requests to the Bolt App.

Bolt's own `App.start()` server handles one request at a time, so a slow
request would delay every acknowledgement behind it; this one gives each
connection its own thread, up to `HTTPLimits.max_connections` (see
adapters/common/http_limits.py for the timeouts and budgets a client lives under).

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
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler

from slack_bolt import App, BoltRequest, BoltResponse

from adapters.common.http_handler import TEXT, GuardedHandler
from adapters.common.http_limits import BoundedServer, HTTPLimits, Refusal, describe_body
from adapters.slack.verify import header_refusal, signature_matches, withhold_bolt_body_log

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
HEALTH_PATH = "/healthz"
MAX_BODY = HTTPLimits().max_body
POLL_SECONDS = 0.1  # how soon stop() takes effect
LABEL = "slack http"  # how its log lines name this server


class SlackHTTPServer:
    """`start()` serves in a background thread; `serve_forever()` blocks; `stop()` ends both."""

    def __init__(
        self,
        app: App,
        *,
        host: str = "0.0.0.0",  # noqa: S104 -- Slack must reach it; requests are signed
        port: int = 3000,
        path: str = EVENTS_PATH,
        signing_secret: str | None = None,
        limits: HTTPLimits | None = None,
    ) -> None:
        limits = limits or HTTPLimits()
        withhold_bolt_body_log()
        handler = _handler(app, path, signing_secret=signing_secret, limits=limits)
        self._server = BoundedServer((host, port), handler, limits.max_connections, name=LABEL)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def url(self, path: str = EVENTS_PATH) -> str:
        host = str(self._server.server_address[0])
        host = "127.0.0.1" if host == "0.0.0.0" else host  # noqa: S104 -- only to build a URL
        return f"http://{host}:{self.port}{path}"

    def start(self) -> None:
        self._thread = threading.Thread(target=self.serve_forever, name="slack-http", daemon=True)
        self._thread.start()

    def serve_forever(self) -> None:
        self._server.serve_forever(poll_interval=POLL_SECONDS)

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)


def _app_secret(app: App) -> str:
    # Bolt keeps the secret it verifies with but offers no public accessor; verifying with
    # that very value keeps our check and Bolt's in agreement.
    secret = app._signing_secret
    if not isinstance(secret, str) or not secret:
        raise ValueError("the Bolt App has no signing secret")
    return secret


def _handler(
    app: App,
    path: str,
    *,
    signing_secret: str | None = None,
    limits: HTTPLimits | None = None,
) -> type[BaseHTTPRequestHandler]:
    secret = (signing_secret or _app_secret(app)).encode("utf-8")
    lim = limits or HTTPLimits()

    class Handler(GuardedHandler):
        limits = lim
        label = LABEL

        def do_GET(self) -> None:
            if self._route()[0] == HEALTH_PATH:
                self._send(200, "ok", TEXT)
            else:
                self._send(404, "not found", TEXT)

        def do_POST(self) -> None:
            request_path, query = self._route()
            if request_path != path:
                self._refuse(Refusal(404, "not found"))
                return
            length = self._declared_length()
            if length is None:
                return
            timestamp = self.headers.get("X-Slack-Request-Timestamp")
            signature = self.headers.get("X-Slack-Signature")
            reason = header_refusal(timestamp, signature)
            if reason is not None or timestamp is None or signature is None:
                self._refuse(Refusal(401, reason or "unsigned"), f"{length} bytes declared")
                return
            raw = self._read_body(length)
            if raw is None:
                return
            if not signature_matches(secret, timestamp, raw, signature):
                self._refuse(Refusal(401, "signature mismatch"), describe_body(raw))
                return
            request = _bolt_request(raw, query, self._header_lists())
            if isinstance(request, Refusal):
                self._refuse(request, describe_body(raw))
                return
            self._dispatch(request)

        def _header_lists(self) -> dict[str, str | Sequence[str]]:
            return {k.lower(): self.headers.get_all(k) or [] for k in set(self.headers.keys())}

        def _dispatch(self, request: BoltRequest) -> None:
            try:
                response: BoltResponse = app.dispatch(request)
            except Exception:  # Bolt handles listener errors; this is a fault of ours or Bolt's
                log.exception("%s: Bolt could not dispatch a signed request", LABEL)
                self._send(500, "internal error", TEXT)
                return
            self._send(response.status, response.body, response.headers)

    return Handler


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
    return request
