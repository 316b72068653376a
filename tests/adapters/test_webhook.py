"""Junk, lies, forgeries and stalls sent as raw bytes to the real push-webhook server.

The server runs in front of a real (paused) scheduler with one configured repository,
so a valid push is seen to move that repository's next run. Short limits make the tests
quick; no test asserts a duration (HANG_GUARD only turns a hang into a failure). Every
test also checks that nothing logged or printed a traceback, and no log record or
output ever holds the marker planted in unauthenticated bodies.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from apscheduler.schedulers.background import BackgroundScheduler

from adapters.common.http_limits import HTTPLimits
from adapters.schedule import JOB_PREFIX, IngestScheduler
from adapters.webhook import LIMITS as WEBHOOK_LIMITS
from adapters.webhook import PATH, WebhookServer, signature_ok
from bot.config import FileConfig, RepoConfig, ScheduleConfig, Settings
from bot.core import Core
from tests.support.raw_http import (
    Reply,
    closed_by_server,
    connect,
    exchange,
    raw_request,
    read_reply,
)

SECRET = "hook-secret"
SHOP_URL = "https://github.com/acme/shop.git"
MARKER = "ATTACKER-MARKER-c41d"
FAR_FUTURE = datetime(2099, 1, 1, tzinfo=UTC)
LIMITS = HTTPLimits(
    max_connections=4, read_timeout=1.0, request_timeout=3.0, linger_timeout=0.5, max_body=200_000
)
STALLED_HEADER = f"POST {PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Hub-".encode()


@dataclass
class Hooked:
    server: WebhookServer
    scheduler: IngestScheduler

    def connect(self) -> socket.socket:
        return connect(self.server.port)

    def shop_scheduled_now(self) -> bool:
        job = self.scheduler.scheduler.get_job(JOB_PREFIX + "shop")
        return bool(job.next_run_time < FAR_FUTURE)


@contextmanager
def serve_webhooks(limits: HTTPLimits | None = None) -> Iterator[Hooked]:
    config = FileConfig(
        repos=(RepoConfig(name="shop", url=SHOP_URL),),
        schedule=ScheduleConfig(interval="15m", jitter_seconds=0),
    )
    core = Core.from_settings(Settings(), config)
    sched = IngestScheduler(core, scheduler=BackgroundScheduler(timezone=ZoneInfo("UTC")))
    sched.apply_config(core.config)
    sched.start(paused=True)
    sched.scheduler.get_job(JOB_PREFIX + "shop").modify(next_run_time=FAR_FUTURE)
    extra = {} if limits is None else {"limits": limits}
    server = WebhookServer(sched, SECRET, port=0, host="127.0.0.1", **extra)
    server.start()
    try:
        yield Hooked(server, sched)
    finally:
        server.stop()
        sched.shutdown()


@pytest.fixture(autouse=True)
def no_tracebacks_no_marker(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> Iterator[None]:
    caplog.set_level(logging.DEBUG)
    yield
    assert [r.getMessage() for r in caplog.records if r.exc_info] == []
    assert [r.getMessage() for r in caplog.records if MARKER in r.getMessage()] == []
    assert MARKER not in caplog.text
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err
    assert MARKER not in out + err


@pytest.fixture
def hooked() -> Iterator[Hooked]:
    with serve_webhooks(LIMITS) as running:
        yield running


def github_signature(body: bytes, secret: str = SECRET) -> str:
    """GitHub's documented header: sha256= and the hex HMAC-SHA256 of the raw body."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def delivery(
    body: bytes,
    *,
    event: str = "push",
    signature: str | None = None,
    length: str | None = None,
    extra: dict[str, str] | None = None,
) -> bytes:
    headers = {"Content-Type": "application/json", "X-GitHub-Event": event}
    headers["X-Hub-Signature-256"] = github_signature(body) if signature is None else signature
    if signature == "":
        del headers["X-Hub-Signature-256"]
    return raw_request(body, path=PATH, headers={**headers, **(extra or {})}, length=length)


def push_body(url: str = SHOP_URL, padding: str = "") -> bytes:
    payload = {"ref": "refs/heads/main", "repository": {"clone_url": url}, "padding": padding}
    return json.dumps(payload).encode()


def forged_body(size: int) -> bytes:
    """A push that names the configured repository, padded with the marker to `size` bytes."""
    body = push_body(padding="")
    return push_body(padding=(MARKER * (size // len(MARKER) + 1))[: size - len(body)])


def test_githubs_documented_signature_example_verifies() -> None:
    # docs.github.com, "Validating webhook deliveries": secret, payload and header.
    header = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert signature_ok(b"It's a Secret to Everybody", b"Hello, World!", header)
    assert not signature_ok(b"It's a Secret to Everybody", b"Hello, World?", header)
    assert not signature_ok(b"It's a Secret to Everybody", b"Hello, World!", header.upper())


def test_valid_deliveries_behave_as_before(hooked: Hooked) -> None:
    assert exchange(hooked, delivery(b"{}", event="ping")).status == 200
    other = push_body("https://github.com/x/y.git")
    assert exchange(hooked, delivery(other)).status == 404
    ignored = exchange(hooked, delivery(b"{}", event="issues"))
    assert (ignored.status, json.loads(ignored.body)) == (202, {"ignored": "issues"})
    assert not hooked.shop_scheduled_now()
    reply = exchange(hooked, delivery(push_body()))
    assert (reply.status, json.loads(reply.body)) == (202, {"scheduled": "shop"})
    assert reply.headers["content-type"] == "application/json"
    assert hooked.shop_scheduled_now()


def test_health_and_unknown_paths(hooked: Hooked) -> None:
    health = raw_request(b"", path="/healthz", method="GET", length="")
    assert exchange(hooked, health).status == 200
    assert exchange(hooked, raw_request(b"", path="/nope", method="GET", length="")).status == 404
    assert exchange(hooked, raw_request(b"{}", path="/webhooks/gitlab")).status == 404


def test_keep_alive_serves_two_deliveries_on_one_connection(hooked: Hooked) -> None:
    with hooked.connect() as sock:
        for _ in range(2):
            sock.sendall(delivery(b"{}", event="ping"))
            assert read_reply(sock).status == 200
        sock.sendall(raw_request(b"", path="/healthz", method="GET"))
        assert read_reply(sock, "GET").status == 200


@pytest.mark.parametrize(
    ("length", "status"),
    [("-1", 400), ("abc", 400), ("1e3", 400), ("", 411), ("200001", 413), ("9" * 30, 400)],
)
def test_content_length_is_judged_before_reading(hooked: Hooked, length: str, status: int) -> None:
    # Only the headers are sent: a server that read first would stall to a 408 instead.
    with hooked.connect() as sock:
        sock.sendall(delivery(b"", signature=github_signature(b"{}"), length=length))
        reply = read_reply(sock)
    assert reply.status == status
    assert json.loads(reply.body)["error"]
    assert not hooked.shop_scheduled_now()


def test_conflicting_lengths_and_chunked_bodies_are_400(hooked: Hooked) -> None:
    body = push_body()
    twice = delivery(body, extra={"Content-Length": "3"})
    assert exchange(hooked, twice).status == 400
    chunked = delivery(b"0\r\n\r\n", length="", extra={"Transfer-Encoding": "chunked"})
    assert exchange(hooked, chunked).status == 400


def test_a_body_shorter_than_its_length_stalls_to_408(hooked: Hooked) -> None:
    body = push_body()
    with hooked.connect() as sock:
        sock.sendall(delivery(body[:10], signature=github_signature(body), length=str(len(body))))
        assert read_reply(sock).status == 408
        assert closed_by_server(sock)
    assert not hooked.shop_scheduled_now()


def test_a_body_cut_short_by_the_client_is_400(hooked: Hooked) -> None:
    body = push_body()
    cut = delivery(body[:10], signature=github_signature(body), length=str(len(body)))
    assert exchange(hooked, cut, half_close=True).status == 400


@pytest.mark.parametrize(
    "signature",
    [
        "",  # no header
        "sha256=00",
        "sha1=" + "0" * 40,
        "sha256=" + "A" * 64,  # GitHub's digest is lowercase hex
        "sha256=" + "0" * 63,
        "sha256=" + "0" * 65,
        " sha256=" + "0" * 64 + "x",
        "v0=" + "0" * 64,
    ],
)
def test_missing_or_malformed_signatures_are_401_before_the_body(
    hooked: Hooked, signature: str
) -> None:
    body = forged_body(150_000)
    with hooked.connect() as sock:
        # Headers only: the refusal must come without the body ever being sent.
        sock.sendall(delivery(b"", signature=signature, length=str(len(body))))
        reply = read_reply(sock)
        assert reply.status == 401
        assert closed_by_server(sock)
    assert exchange(hooked, delivery(body, signature=signature)).status == 401
    assert not hooked.shop_scheduled_now()


def test_a_mismatched_signature_is_401_and_only_a_size_and_hash_are_logged(
    hooked: Hooked, caplog: pytest.LogCaptureFixture
) -> None:
    body = forged_body(150_000)
    forged = delivery(body, signature=github_signature(body, secret="guessed"))
    reply = exchange(hooked, forged)
    assert (reply.status, json.loads(reply.body)) == (401, {"error": "invalid request"})
    assert not hooked.shop_scheduled_now()
    short_hash = hashlib.sha256(body).hexdigest()[:16]
    refusals = [r.getMessage() for r in caplog.records if "signature mismatch" in r.getMessage()]
    assert refusals and all(short_hash in line and "webhooks:" in line for line in refusals)
    assert all(f"{len(body)} bytes" in line for line in refusals)


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"[1, 2]",
        b'"push"',
        b"null",
        b"not json",
        b"\xff\xfe{",
        pytest.param(b"[" * 100_000, id="deeply-nested"),
    ],
)
def test_signed_bodies_that_are_not_json_objects_are_400(hooked: Hooked, body: bytes) -> None:
    for event in ("push", "ping"):
        reply = exchange(hooked, delivery(body, event=event))
        assert (reply.status, json.loads(reply.body)) == (
            400,
            {"error": "body is not a JSON object"},
        )
    assert not hooked.shop_scheduled_now()


def test_garbage_request_lines_and_huge_headers_get_4xx_or_a_close(hooked: Hooked) -> None:
    assert exchange(hooked, b"\x00\x01garbage\r\n\r\n").status == 400
    with hooked.connect() as sock:
        sock.sendall(f"POST {PATH} HTTP/1.1\r\nX-Pad: ".encode() + b"a" * 400_000)
        assert closed_by_server(sock)
    assert exchange(hooked, delivery(b"{}", event="ping")).status == 200


def test_stalled_connections_fill_the_cap_but_a_push_still_gets_through(
    caplog: pytest.LogCaptureFixture,
) -> None:
    limits = HTTPLimits(max_connections=4, read_timeout=3.0, request_timeout=3.0)
    with serve_webhooks(limits) as hooked:
        stalled = [_stall(hooked) for _ in range(3)]
        with hooked.connect() as sock:  # the last free slot
            sock.sendall(delivery(push_body(), extra={"Connection": "close"}))
            assert read_reply(sock).status == 202
            assert closed_by_server(sock)
        assert hooked.shop_scheduled_now()
        stalled.append(_stall(hooked))
        busy: list[Reply] = []
        for _ in range(5):  # beyond the cap: refused as soon as it says what it is
            with hooked.connect() as sock:
                sock.sendall(delivery(push_body()))
                busy.append(read_reply(sock))
        assert [(r.status, r.headers.get("retry-after")) for r in busy] == [(503, "1")] * 5
        warnings = [r.getMessage() for r in caplog.records if "slots busy" in r.getMessage()]
        assert len(warnings) == 1 and warnings[0].startswith("webhooks:")
        assert [closed_by_server(sock) for sock in stalled] == [True] * 4
        for sock in stalled:
            sock.close()
        assert exchange(hooked, delivery(b"{}", event="ping")).status == 200


def _stall(hooked: Hooked) -> socket.socket:
    sock = hooked.connect()
    sock.sendall(STALLED_HEADER)
    return sock


def test_default_limits_take_githubs_large_payloads() -> None:
    # Larger than the Slack server's 1 MB, within the webhook server's 5 MB.
    assert WEBHOOK_LIMITS.max_body == 5_000_000
    with serve_webhooks() as hooked:
        big = push_body(padding="x" * 1_500_000)
        reply = exchange(hooked, delivery(big))
        assert (reply.status, json.loads(reply.body)) == (202, {"scheduled": "shop"})
        with hooked.connect() as sock:
            sock.sendall(delivery(b"", length=str(WEBHOOK_LIMITS.max_body + 1)))
            assert read_reply(sock).status == 413
