"""The routed server as raw bytes see it: health, readiness, 404s, per-route budgets and refusals."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest

from adapters.common.http_handler import TEXT, GuardedHandler
from adapters.common.http_limits import HTTPLimits
from adapters.common.http_routes import Route, RoutedServer, health_routes, start_routed
from tests.support.raw_http import closed_by_server, connect, exchange, raw_request, read_reply

SERVER_LIMITS = HTTPLimits(
    max_connections=4, read_timeout=1.0, request_timeout=3.0, linger_timeout=0.5, max_body=1_000
)
BIG_LIMITS = HTTPLimits(
    max_connections=4, read_timeout=1.0, request_timeout=3.0, linger_timeout=0.5, max_body=5_000
)


@dataclass
class Served:
    server: RoutedServer
    reasons: list[str]  # what the readiness check says next (the last one sticks)

    def connect(self):  # type: ignore[no-untyped-def]
        return connect(self.server.port)


def _echo(request: GuardedHandler, query: str) -> None:
    length = request.body_length()
    if length is None:
        return
    body = request.read_body(length)
    if body is not None:
        request.send(200, f"{len(body)} bytes", TEXT)


@contextmanager
def served() -> Iterator[Served]:
    reasons: list[str] = [""]

    def readiness() -> str:
        reason = reasons[0]
        if reason == "boom":
            raise RuntimeError("secret-token-xyz in a traceback")
        return reason

    routes = [
        *health_routes(readiness),
        Route("POST", "/small", _echo),
        Route("POST", "/big", _echo, limits=BIG_LIMITS, json=True),
    ]
    server = start_routed(routes, port=0, host="127.0.0.1", limits=SERVER_LIMITS, label="test")
    try:
        yield Served(server, reasons)
    finally:
        server.stop()


@pytest.fixture
def web() -> Iterator[Served]:
    with served() as running:
        yield running


def _get(web: Served, path: str) -> tuple[int, str]:
    reply = exchange(web, raw_request(b"", path=path, method="GET", length=""))
    return reply.status, reply.body.decode()


def test_liveness_is_200_and_readiness_follows_the_check(web: Served) -> None:
    assert _get(web, "/healthz") == (200, "ok")
    assert _get(web, "/readyz") == (200, "ready")
    web.reasons[0] = "index: The index file is damaged"
    assert _get(web, "/readyz") == (503, "not ready: index: The index file is damaged")
    assert _get(web, "/healthz") == (200, "ok")  # alive, though not ready
    web.reasons[0] = ""
    assert _get(web, "/readyz") == (200, "ready")


def test_a_readiness_check_that_crashes_is_503_without_its_text(
    web: Served, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    web.reasons[0] = "boom"
    status, body = _get(web, "/readyz")
    assert (status, body) == (503, "not ready: the readiness check failed")
    assert "secret-token-xyz" not in body


def test_unknown_paths_and_methods_are_404(web: Served) -> None:
    assert _get(web, "/nope")[0] == 404
    assert _get(web, "/small")[0] == 404  # a POST route asked with GET
    with web.connect() as sock:  # a POST to no route: refused before its body is read
        sock.sendall(raw_request(b"", path="/healthz", length="100"))
        assert read_reply(sock).status == 404
        assert closed_by_server(sock)


def test_each_route_lives_under_its_own_body_budget(web: Served) -> None:
    body = b"x" * 3_000  # over the server's 1,000 bytes, within /big's 5,000
    assert exchange(web, raw_request(body, path="/big")).body == b"3000 bytes"
    assert exchange(web, raw_request(body, path="/small")).status == 413
    assert exchange(web, raw_request(b"x" * 900, path="/small")).body == b"900 bytes"
    with web.connect() as sock:
        sock.sendall(raw_request(b"", path="/big", length="5001"))
        assert read_reply(sock).status == 413


def test_refusals_speak_the_routes_format(web: Served) -> None:
    json_refusal = exchange(web, raw_request(b"", path="/big", length="abc"))
    assert json_refusal.status == 400 and json.loads(json_refusal.body)["error"]
    text_refusal = exchange(web, raw_request(b"", path="/small", length="abc"))
    assert text_refusal.status == 400 and text_refusal.body == b"malformed Content-Length"


def test_keep_alive_serves_every_route_on_one_connection(web: Served) -> None:
    with web.connect() as sock:
        sock.sendall(raw_request(b"", path="/healthz", method="GET"))
        assert read_reply(sock, "GET").status == 200
        sock.sendall(raw_request(b"x" * 2_000, path="/big"))
        assert read_reply(sock).body == b"2000 bytes"
        sock.sendall(raw_request(b"x" * 10, path="/small"))  # the budget is the server's again
        assert read_reply(sock).body == b"10 bytes"
        sock.sendall(raw_request(b"", path="/readyz", method="GET"))
        assert read_reply(sock, "GET").status == 200


def test_a_port_in_use_is_a_config_error(web: Served) -> None:
    from bot.errors import ConfigError

    with pytest.raises(ConfigError, match=f"port {web.server.port}"):
        start_routed([], port=web.server.port, host="127.0.0.1")
