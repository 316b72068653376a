"""HTTP mode: a small threaded server that feeds Slack's requests to the Bolt App.

Bolt's own `App.start()` server handles one request at a time, so a slow
request would delay every acknowledgement behind it; this one gives each
request its own thread. Bolt verifies the signature (`X-Slack-Signature`,
`X-Slack-Request-Timestamp` within 5 minutes) and answers 401 otherwise.
`GET /healthz` answers 200 for load balancers.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from slack_bolt import App, BoltRequest, BoltResponse

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
HEALTH_PATH = "/healthz"
MAX_BODY = 1_000_000  # Slack payloads are far smaller
POLL_SECONDS = 0.1  # how soon stop() takes effect


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # A burst of events would overflow the default backlog of 5; dropped connections are
    # retried by the client's TCP stack only after a second.
    request_queue_size = 128


class SlackHTTPServer:
    """`start()` serves in a background thread; `serve_forever()` blocks; `stop()` ends both."""

    def __init__(
        self,
        app: App,
        *,
        host: str = "0.0.0.0",  # noqa: S104 -- Slack must reach it; requests are signed
        port: int = 3000,
        path: str = EVENTS_PATH,
    ) -> None:
        self._server = _Server((host, port), _handler(app, path))
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


def _handler(app: App, path: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("%s %s", self.address_string(), format % args)

        def do_GET(self) -> None:
            if self.path.partition("?")[0] == HEALTH_PATH:
                self._send(200, "ok", {"content-type": ["text/plain"]})
            else:
                self._send(404, "not found", {"content-type": ["text/plain"]})

        def do_POST(self) -> None:
            request_path, _, query = self.path.partition("?")
            if request_path != path:
                self.close_connection = True  # the body is left unread
                self._send(404, "not found", {"content-type": ["text/plain"]})
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                self.close_connection = True
                self._send(413, "payload too large", {"content-type": ["text/plain"]})
                return
            body = self.rfile.read(length).decode("utf-8", "replace")
            headers: dict[str, str | Sequence[str]] = {
                k.lower(): self.headers.get_all(k) or [] for k in set(self.headers.keys())
            }
            response: BoltResponse = app.dispatch(
                BoltRequest(body=body, query=query, headers=headers)
            )
            self._send(response.status, response.body, response.headers)

        def _send(self, status: int, body: str | dict[str, Any], headers: dict[str, Any]) -> None:
            text = body if isinstance(body, str) else json.dumps(body)
            data = text.encode("utf-8")
            self.send_response(status)
            for name, values in headers.items():
                if name.lower() == "content-length":
                    continue
                for value in values if isinstance(values, list | tuple) else [values]:
                    self.send_header(name, str(value))
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler
