"""HTTP mode: a small threaded server that feeds Slack's requests to the Bolt App.

Bolt's own `App.start()` server handles one request at a time, so a slow
request would delay every acknowledgement behind it; this one gives each
connection its own thread, up to `HTTPLimits.max_connections` (see
http_limits.py for the timeouts and budgets a client lives under).

A POST to the events path is judged in this order, each step before the next
is paid for: framing (Content-Length: 400/411/413), then the signing headers
(timestamp within 5 minutes, `v0=` signature shape: 401), and only then is the
body read (a stall: 408; a short body: 400) and its HMAC checked (401). An
unauthenticated request never reaches Bolt, and nothing of its body is logged.
A signed body that is not JSON or a form Bolt can read gets 400.
`GET /healthz` answers 200 for load balancers.
"""

from __future__ import annotations

import io
import json
import logging
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler
from typing import Any

from slack_bolt import App, BoltRequest, BoltResponse

from adapters.slack.http_limits import (
    BoundedServer,
    DeadlineReader,
    HTTPLimits,
    Refusal,
    declared_length,
    linger,
)
from adapters.slack.verify import (
    describe_body,
    header_refusal,
    signature_matches,
    withhold_bolt_body_log,
)

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
HEALTH_PATH = "/healthz"
MAX_BODY = HTTPLimits().max_body
POLL_SECONDS = 0.1  # how soon stop() takes effect
_LOGGED_LINE = 200  # characters of a request line a debug log may show


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
        self._server = BoundedServer((host, port), handler, limits.max_connections)
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

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Until a request line parses, the stdlib assumes HTTP/0.9 and answers errors without a
        # status line; clients sending junk should still read a plain 400.
        default_request_version = "HTTP/1.1"
        timeout = lim.read_timeout  # the socket's timeout, which writes keep

        def setup(self) -> None:
            super().setup()
            self.rfile.close()  # replaced: every read now counts against the request's deadline
            self.reader = DeadlineReader(self.connection, lim)
            self.rfile = io.BufferedReader(self.reader)
            self.refused = False

        def finish(self) -> None:
            super().finish()
            if self.refused:
                linger(self.connection, lim)

        def handle_one_request(self) -> None:
            # Keep-alive idle time counts against the next request's deadline.
            self.reader.restart()
            super().handle_one_request()

        def send_error(
            self, code: int, message: str | None = None, explain: str | None = None
        ) -> None:
            self.refused = True  # the stdlib's own refusals: bad request line, headers too long
            super().send_error(code, message, explain)

        def log_message(self, format: str, *args: Any) -> None:
            line = (format % args)[:_LOGGED_LINE]
            log.debug("slack http %s: %r", self.address_string(), line)

        def do_GET(self) -> None:
            if self.headers.get("Content-Length", "0").strip() != "0":
                self.close_connection = True  # a GET body would be read as the next request
            if self.path.partition("?")[0] == HEALTH_PATH:
                self._send(200, "ok", {"content-type": ["text/plain"]})
            else:
                self._send(404, "not found", {"content-type": ["text/plain"]})

        def do_POST(self) -> None:
            request_path, _, query = self.path.partition("?")
            if request_path != path:
                self._refuse(Refusal(404, "not found"))
                return
            length = declared_length(self.headers, lim.max_body)
            if isinstance(length, Refusal):
                self._refuse(length)
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

        def _read_body(self, length: int) -> bytes | None:
            try:
                raw = self.rfile.read(length)
            except TimeoutError:
                self._refuse(Refusal(408, "body not received in time"), f"{length} bytes declared")
                return None
            if len(raw) < length:
                self._refuse(Refusal(400, "body shorter than Content-Length"), describe_body(raw))
                return None
            return raw

        def _header_lists(self) -> dict[str, str | Sequence[str]]:
            return {k.lower(): self.headers.get_all(k) or [] for k in set(self.headers.keys())}

        def _dispatch(self, request: BoltRequest) -> None:
            try:
                response: BoltResponse = app.dispatch(request)
            except Exception:  # Bolt handles listener errors; this is a fault of ours or Bolt's
                log.exception("slack http: Bolt could not dispatch a signed request")
                self._send(500, "internal error", {"content-type": ["text/plain"]})
                return
            self._send(response.status, response.body, response.headers)

        def _refuse(self, refusal: Refusal, body_note: str = "") -> None:
            # The rest of the body, if any, is left unread: the connection cannot be reused.
            self.close_connection = True
            self.refused = True
            note = f" ({body_note})" if body_note else ""
            log.info(
                "slack http: %d for %s: %s%s",
                refusal.status,
                self.client_address[0],
                refusal.reason,
                note,
            )
            text = "invalid request" if refusal.status == 401 else refusal.reason
            self._send(refusal.status, text, {"content-type": ["text/plain"]})

        def _send(self, status: int, body: str | dict[str, Any], headers: dict[str, Any]) -> None:
            text = body if isinstance(body, str) else json.dumps(body)
            data = text.encode("utf-8")
            self.connection.settimeout(lim.read_timeout)  # reads may have shortened it
            self.send_response(status)
            for name, values in headers.items():
                if name.lower() in ("content-length", "connection"):
                    continue
                for value in values if isinstance(values, list | tuple) else [values]:
                    self.send_header(name, str(value))
            self.send_header("Content-Length", str(len(data)))
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)

    return Handler


def _bolt_request(
    raw: bytes, query: str, headers: dict[str, str | Sequence[str]]
) -> BoltRequest | Refusal:
    """The signed body as Bolt reads it; 400 unless it is UTF-8 JSON or a form Bolt can read."""
    try:
        request = BoltRequest(body=raw.decode("utf-8"), query=query, headers=headers)
    except (ValueError, TypeError, AttributeError, KeyError, IndexError):  # JSON, UTF-8, shapes
        return Refusal(400, "body is not a Slack payload")
    if not isinstance(request.body, dict):
        return Refusal(400, "body is not a Slack payload")
    return request
