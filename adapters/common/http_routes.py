"""One routed HTTP server per process: `/healthz`, `/readyz`, `/metrics`, push webhooks, Slack's
events.

    routes = [*health_routes(core.readiness), webhook_route(...), slack_route(app)]
    server = start_routed(routes, port=8080, label="web")   # ConfigError if it cannot bind
    ...
    server.stop()

Every route lives under the same guards (http_handler.py, http_limits.py): one
bounded pool of connection threads, a deadline per request, framing judged
before a body is read. A route sees the request only once its method and path
match; it may bring its own body and time budget (`Route.limits`, applied as soon
as the request is routed) and answer its refusals in JSON (`Route.json`).
Anything else is 404: at once for a GET, after refusing (and closing) for a POST,
whose body is never read.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from adapters.common.http_handler import TEXT, GuardedHandler
from adapters.common.http_limits import BoundedServer, HTTPLimits, Refusal
from bot.errors import ConfigError
from bot.runtime import metrics

log = logging.getLogger(__name__)

HEALTH_PATH = "/healthz"
READY_PATH = "/readyz"
METRICS_PATH = "/metrics"
PROBE_PATHS = (HEALTH_PATH, READY_PATH, METRICS_PATH)  # served even when every slot is taken
POLL_SECONDS = 0.1  # how soon stop() takes effect
ANY_HOST = "0.0.0.0"  # noqa: S104 -- the platform's router must reach it; POST routes verify

RouteHandler = Callable[[GuardedHandler, str], None]  # (the request, its query string)


@dataclass(frozen=True, slots=True)
class Route:
    method: str  # "GET" or "POST"
    path: str
    handle: RouteHandler
    limits: HTTPLimits | None = None  # the server's when None
    json: bool = False  # refusals as {"error": ...}


def health_routes(readiness: Callable[[], str]) -> list[Route]:
    """Liveness (200 while the process runs), readiness (`readiness()` is "" when ready) and
    the process's metrics in Prometheus's text format (`bot.runtime.metrics`)."""

    def healthz(request: GuardedHandler, query: str) -> None:
        request.send(200, "ok", TEXT)

    def readyz(request: GuardedHandler, query: str) -> None:
        try:
            reason = readiness()
        except Exception:  # a fault of ours; the probe still gets a short answer
            log.exception("the readiness check failed")
            reason = "the readiness check failed"
        if reason:
            log.info("not ready: %s", reason)
            request.send(503, f"not ready: {reason}", TEXT)
        else:
            request.send(200, "ready", TEXT)

    def metrics_text(request: GuardedHandler, query: str) -> None:
        body, content_type = metrics.exposition()
        request.send(200, body.decode("utf-8"), {"Content-Type": content_type})

    return [
        Route("GET", HEALTH_PATH, healthz),
        Route("GET", READY_PATH, readyz),
        Route("GET", METRICS_PATH, metrics_text),
    ]


class RoutedServer:
    """`start()` serves in a background thread; `serve_forever()` blocks; `stop()` ends both."""

    def __init__(
        self,
        routes: Sequence[Route],
        *,
        host: str = ANY_HOST,
        port: int = 0,
        limits: HTTPLimits | None = None,
        label: str = "http",
    ) -> None:
        self.routes = tuple(routes)
        self.label = label
        handler = routed_handler(self.routes, limits or HTTPLimits(), label)
        probe = type("ProbeHandler", (handler,), {"probe_only": True})
        probed = [r.path for r in self.routes if r.method == "GET" and r.path in PROBE_PATHS]
        self._server = BoundedServer(
            (host, port),
            handler,
            handler.limits,
            name=label,
            probes=(probe, probed) if probed else None,
        )
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def paths(self) -> list[str]:
        return [f"{r.method} {r.path}" for r in self.routes]

    def url(self, path: str) -> str:
        host = str(self._server.server_address[0])
        host = "127.0.0.1" if host == ANY_HOST else host  # only to build a URL
        return f"http://{host}:{self.port}{path}"

    def start(self) -> None:
        self._thread = threading.Thread(target=self.serve_forever, name=self.label, daemon=True)
        self._thread.start()

    def serve_forever(self) -> None:
        self._server.serve_forever(poll_interval=POLL_SECONDS)

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)


def start_routed(
    routes: Sequence[Route],
    *,
    port: int,
    host: str = ANY_HOST,
    limits: HTTPLimits | None = None,
    label: str = "web",
) -> RoutedServer:
    """Bind and serve in the background; a port that cannot be bound is a ConfigError."""
    try:
        server = RoutedServer(routes, host=host, port=port, limits=limits, label=label)
    except OSError as exc:
        raise ConfigError(f"Cannot listen on port {port}: {exc.strerror}.") from exc
    server.start()
    log.info("%s: listening on port %d: %s", label, server.port, ", ".join(server.paths))
    return server


def routed_handler(
    routes: Sequence[Route], server_limits: HTTPLimits, server_label: str
) -> type[GuardedHandler]:
    """The request handler class that serves `routes` (for a server of the caller's own)."""
    table = {(r.method, r.path): r for r in routes}

    class Handler(GuardedHandler):
        limits = server_limits
        label = server_label

        def do_GET(self) -> None:
            route, query = self._find("GET")
            if route is None:
                self.send(404, "not found", TEXT)  # nothing unread: the connection stays
                return
            route.handle(self, query)

        def do_POST(self) -> None:
            route, query = self._find("POST")
            if route is None:
                self.refuse(Refusal(404, "not found"))
                return
            route.handle(self, query)

        def _find(self, method: str) -> tuple[Route | None, str]:
            path, query = self.path_and_query()
            route = table.get((method, path))
            if route is not None:
                self.json_refusals = route.json
                if route.limits is not None:
                    self.use_limits(route.limits)
            return route, query

    return Handler
