"""The request handler our HTTP server builds on: every read under a deadline, no tracebacks.

`GuardedHandler` installs the `DeadlineReader`, lingers after a refusal so the reply
arrives, keeps request lines short in debug logs, and offers the steps a POST goes
through: `body_length` (411/400/413 before reading), `read_body` (408 for a
stall, 400 for a short body), `refuse` (a logged refusal that never shows a body)
and `send`. The routed server (http_routes.py) sets `limits` and `label`; each
route keeps only its verification, and may bring its own body and time budget
(`use_limits`) and its own refusal format (JSON for webhooks).
"""

from __future__ import annotations

import io
import json
import logging
from http.server import BaseHTTPRequestHandler
from typing import Any, ClassVar

from adapters.common.http_limits import (
    DeadlineReader,
    HTTPLimits,
    Refusal,
    declared_length,
    describe_body,
    linger,
)

log = logging.getLogger(__name__)

_LOGGED_LINE = 200  # characters of a request line a debug log may show
TEXT = {"content-type": ["text/plain"]}
JSON = {"Content-Type": "application/json"}


class GuardedHandler(BaseHTTPRequestHandler):
    limits: ClassVar[HTTPLimits] = HTTPLimits()
    label: ClassVar[str] = "http"  # names the server in log lines: "slack http", "webhooks"
    probe_only: ClassVar[bool] = False  # a health check beyond the slots: one request, closed

    protocol_version = "HTTP/1.1"
    # Until a request line parses, the stdlib assumes HTTP/0.9 and answers errors without a
    # status line; clients sending junk should still read a plain 400.
    default_request_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.limits.read_timeout)  # the timeout writes keep
        self.rfile.close()  # replaced: every read now counts against the request's deadline
        self.reader = DeadlineReader(self.connection, self.limits)
        self.rfile = io.BufferedReader(self.reader)
        self.refused = False
        self.request_limits = self.limits
        self.json_refusals = False

    def finish(self) -> None:
        super().finish()
        if self.refused:
            linger(self.connection, self.limits)

    def handle_one_request(self) -> None:
        # Keep-alive idle time counts against the next request's deadline.
        self.reader.restart()
        self.request_limits = self.limits
        self.json_refusals = False
        super().handle_one_request()
        if self.probe_only:
            self.close_connection = True

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        self.refused = True  # the stdlib's own refusals: bad request line, headers too long
        super().send_error(code, message, explain)

    def log_message(self, format: str, *args: Any) -> None:
        line = (format % args)[:_LOGGED_LINE]
        log.debug("%s %s: %r", self.label, self.address_string(), line)

    def use_limits(self, limits: HTTPLimits) -> None:
        """This request's route has its own body and time budget (counted from its start)."""
        self.request_limits = limits
        self.reader.allow(limits)

    def path_and_query(self) -> tuple[str, str]:
        """The request's path and query; a GET with a body cannot keep its connection."""
        if self.command != "POST" and self.headers.get("Content-Length", "0").strip() != "0":
            self.close_connection = True  # the body would be read as the next request
        path, _, query = self.path.partition("?")
        return path, query

    def body_length(self) -> int | None:
        """Content-Length judged before a byte is read; None once the request is refused."""
        length = declared_length(self.headers, self.request_limits.max_body)
        if isinstance(length, Refusal):
            self.refuse(length)
            return None
        return length

    def read_body(self, length: int) -> bytes | None:
        try:
            raw = self.rfile.read(length)
        except TimeoutError:
            self.refuse(Refusal(408, "body not received in time"), f"{length} bytes declared")
            return None
        if len(raw) < length:
            self.refuse(Refusal(400, "body shorter than Content-Length"), describe_body(raw))
            return None
        return raw

    def refuse(self, refusal: Refusal, body_note: str = "") -> None:
        """Log and answer a refusal. `body_note` is a size or `describe_body`, never content."""
        # The rest of the body, if any, is left unread: the connection cannot be reused.
        self.close_connection = True
        self.refused = True
        note = f" ({body_note})" if body_note else ""
        log.info(
            "%s: %d for %s: %s%s",
            self.label,
            refusal.status,
            self.client_address[0],
            refusal.reason,
            note,
        )
        text = "invalid request" if refusal.status == 401 else refusal.reason
        if self.json_refusals:
            self.send(refusal.status, {"error": text}, JSON)
        else:
            self.send(refusal.status, text, TEXT)

    def send(self, status: int, body: str | dict[str, Any], headers: dict[str, Any]) -> None:
        text = body if isinstance(body, str) else json.dumps(body)
        data = text.encode("utf-8")
        self.connection.settimeout(self.limits.read_timeout)  # reads may have shortened it
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
