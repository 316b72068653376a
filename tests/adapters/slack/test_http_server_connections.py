"""What a client can hold: slots, threads and time, against the real server over raw sockets.

Short limits make the tests quick; no test asserts a duration. HANG_GUARD only turns a
server that never lets go into a failure instead of a hang.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import time
from collections.abc import Iterator

import pytest

from adapters.common.http_limits import HTTPLimits
from tests.servers.slack_fake import FakeSlack
from tests.support.raw_http import HANG_GUARD, closed_by_server, exchange, read_reply
from tests.support.slack_raw_http import (
    Served,
    mention_body,
    request,
    serve_bolt,
    slack_headers,
)

STALLED_HEADER = b"POST /slack/events HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slack-"


@pytest.fixture(autouse=True)
def no_tracebacks(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> Iterator[None]:
    caplog.set_level(logging.DEBUG)
    yield
    assert [r.getMessage() for r in caplog.records if r.exc_info] == []
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err


def _signed_mention(event_id: str) -> bytes:
    body = mention_body(event_id=event_id)
    return request(body, headers={**slack_headers(body), "Connection": "close"})


def _stall(served: Served) -> socket.socket:
    sock = served.connect()
    sock.sendall(STALLED_HEADER)
    return sock


def test_stalled_connections_fill_the_cap_but_no_more(
    slack: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    limits = HTTPLimits(max_connections=4, read_timeout=3.0, request_timeout=3.0)
    with serve_bolt(slack, limits) as served:
        stalled = [_stall(served) for _ in range(3)]
        # One slot left: a real Slack request is served while the three hang.
        with served.connect() as sock:
            sock.sendall(_signed_mention("EvWhileStalled"))
            assert read_reply(sock).status == 200
            assert closed_by_server(sock)  # its slot is free again once it is closed
        stalled.append(_stall(served))
        busy = []
        for number in range(6):  # beyond the cap: refused as soon as it says what it is
            with served.connect() as sock:
                sock.sendall(_signed_mention(f"EvBeyond{number}"))
                reply = read_reply(sock)
                busy.append((reply.status, reply.headers.get("retry-after")))
        assert busy == [(503, "1")] * 6
        refusals = [r for r in caplog.records if "slots busy" in r.getMessage()]
        assert len(refusals) == 1  # six refusals, one warning line
        # The stalled ones are cut off by the server, not by the client giving up.
        assert [closed_by_server(sock) for sock in stalled] == [True] * 4
        for sock in stalled:
            sock.close()
        assert exchange(served, _signed_mention("EvAfterStalled")).status == 200
        slack.wait_for(lambda: len(served.mentions) == 2 and served.mentions)


def test_a_header_dripped_byte_by_byte_is_cut_off_at_the_deadline(slack: FakeSlack) -> None:
    limits = HTTPLimits(read_timeout=1.0, request_timeout=2.0)
    with serve_bolt(slack, limits) as served, served.connect() as sock:
        sock.sendall(STALLED_HEADER + b"Junk: ")
        assert _drip_until_closed(sock), "a byte every 0.1 s kept the connection open"


def test_a_body_dripped_byte_by_byte_gets_408(slack: FakeSlack) -> None:
    limits = HTTPLimits(read_timeout=1.0, request_timeout=2.0)
    body = mention_body()
    head = request(b"", headers=slack_headers(body), length=str(len(body) * 1000))
    with serve_bolt(slack, limits) as served, served.connect() as sock:
        sock.sendall(head)
        replied = _drip_until_closed(sock, reply_expected=True)
        assert replied == b"HTTP/1.1 408"


def test_an_idle_keep_alive_connection_is_closed(slack: FakeSlack) -> None:
    limits = HTTPLimits(read_timeout=1.0, request_timeout=2.0)
    with serve_bolt(slack, limits) as served, served.connect() as sock:
        sock.sendall(request(b"", method="GET", path="/healthz"))
        reply = read_reply(sock, "GET")
        assert reply.status == 200 and reply.headers.get("connection") != "close"
        assert closed_by_server(sock)


def test_headers_beyond_the_byte_budget_close_the_connection(slack: FakeSlack) -> None:
    limits = HTTPLimits(max_body=10_000, max_header_bytes=10_000)
    junk = b"".join(b"X-Junk-%d: %s\r\n" % (i, b"a" * 9_000) for i in range(40))
    with serve_bolt(slack, limits) as served, served.connect() as sock:
        with contextlib.suppress(OSError):  # the server may close while we are still sending
            sock.sendall(b"GET /healthz HTTP/1.1\r\n" + junk + b"\r\n")
        assert _everything_received(sock) == b""  # closed without serving the request
        assert exchange(served, request(b"", method="GET", path="/healthz")).status == 200


def _drip_until_closed(sock: socket.socket, *, reply_expected: bool = False) -> bytes | bool:
    """Send one byte every 0.1 s until the server ends the connection (or HANG_GUARD passes).

    Returns the first bytes of the server's reply when `reply_expected`, else whether it closed.
    """
    sock.settimeout(0.1)
    received = b""
    give_up = time.monotonic() + HANG_GUARD
    while time.monotonic() < give_up:
        try:
            sock.send(b"a")
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        except OSError:  # reset or broken pipe: closed
            return received[:12] if reply_expected else True
        if not chunk:
            return received[:12] if reply_expected else True
        received += chunk
    return False


def _everything_received(sock: socket.socket) -> bytes:
    """All the server sends until it closes (EOF or reset)."""
    sock.settimeout(HANG_GUARD)
    received = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            received += chunk
    return received


def _from(address: str, port: int) -> socket.socket:
    """A connection from another client address (all of 127/8 is this machine)."""
    return socket.create_connection(
        ("127.0.0.1", port), timeout=HANG_GUARD, source_address=(address, 0)
    )


def _health(sock: socket.socket, path: str = "/healthz") -> int:
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    return read_reply(sock, "GET").status


def test_idle_connections_of_one_client_leave_the_others_and_the_health_checks_served(
    slack: FakeSlack,
) -> None:
    """Issue 27: 64 idle connections left /healthz and a signed Slack event with 503."""
    limits = HTTPLimits()  # as `serve` runs: 64 slots, 16 for one client
    with serve_bolt(slack, limits) as served:
        idle = [served.connect() for _ in range(limits.max_connections)]
        try:
            with served.connect() as sock:  # the idle client's own health check still passes
                assert _health(sock) == 200
            with _from("127.0.0.2", served.port) as sock:  # Slack, from its own address
                sock.sendall(_signed_mention("EvBesideIdle"))
                assert read_reply(sock).status == 200
            slack.wait_for(lambda: len(served.mentions) == 1 and served.mentions)
        finally:
            for sock in idle:
                sock.close()


def test_health_checks_are_answered_when_every_slot_is_taken(slack: FakeSlack) -> None:
    limits = HTTPLimits(max_connections=4, read_timeout=3.0, request_timeout=3.0)
    with serve_bolt(slack, limits) as served:
        stalled = [_from(f"127.0.1.{n}", served.port) for n in range(4)]
        for sock in stalled:
            sock.sendall(STALLED_HEADER)
        try:
            for path in ("/healthz", "/readyz", "/metrics"):
                with served.connect() as sock:
                    assert _health(sock, path) == 200, path
                    assert closed_by_server(sock)  # one request on a probe slot, then closed
            with served.connect() as sock:
                sock.sendall(_signed_mention("EvNoSlot"))
                reply = read_reply(sock)
                assert (reply.status, reply.headers.get("retry-after")) == (503, "1")
            with served.connect() as sock:  # says nothing: refused once the wait is over
                assert read_reply(sock).status == 503
        finally:
            for sock in stalled:
                sock.close()
