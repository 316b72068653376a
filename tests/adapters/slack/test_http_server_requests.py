"""Junk, lies and forgeries sent as raw bytes to the real server in front of a real Bolt App.

Every test also checks that nothing logged a traceback and nothing printed one.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from urllib.parse import urlencode

import pytest
from slack_bolt import BoltRequest

from adapters.common.http_limits import HTTPLimits
from tests.servers.slack_fake import FakeSlack
from tests.support.raw_http import closed_by_server, exchange, read_reply
from tests.support.slack_raw_http import (
    Served,
    mention_body,
    request,
    serve_bolt,
    signed,
    slack_headers,
)

LIMITS = HTTPLimits(read_timeout=1.0, request_timeout=3.0, linger_timeout=0.5, max_body=1_000_000)
MARKER = "ATTACKER-MARKER-7f3a"


@pytest.fixture(autouse=True)
def no_tracebacks(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> Iterator[None]:
    caplog.set_level(logging.DEBUG)  # before the App exists: Bolt copies the root's level
    yield
    assert [r.getMessage() for r in caplog.records if r.exc_info] == []
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err


@pytest.fixture
def served(slack: FakeSlack) -> Iterator[Served]:
    with serve_bolt(slack, LIMITS) as running:
        yield running


def test_a_signed_mention_is_dispatched_to_bolt(served: Served, slack: FakeSlack) -> None:
    reply = exchange(served, signed(mention_body(event_id="EvOK")))
    assert reply.status == 200
    slack.wait_for(lambda: served.mentions)
    assert served.mentions[0]["text"] == "<@UBOT0001> hello"


def test_url_verification_and_keep_alive_serve_two_requests_on_one_connection(
    served: Served,
) -> None:
    body = json.dumps({"type": "url_verification", "challenge": "c-42", "token": "t"}).encode()
    with served.connect() as sock:
        for _ in range(2):
            sock.sendall(signed(body))
            reply = read_reply(sock)
            assert reply.status == 200 and b"c-42" in reply.body
        sock.sendall(request(b"", method="GET", path="/healthz"))
        assert read_reply(sock, "GET").status == 200


def test_paths_other_than_the_events_path_are_404(served: Served) -> None:
    body = mention_body()
    assert exchange(served, request(body, headers=slack_headers(body), path="/other")).status == 404
    assert exchange(served, request(b"", method="GET", path="/slack/events")).status == 404
    assert exchange(served, request(b"", method="GET", path="/healthz?probe=1")).status == 200


@pytest.mark.parametrize(
    ("length", "status"),
    [
        ("-1", 400),
        ("abc", 400),
        ("+5", 400),
        ("1\u00b2", 400),
        ("1e3", 400),
        ("5, 5", 400),
        ("99999999999999999999999", 400),
        ("", 411),
        ("2000000", 413),
    ],
)
def test_content_length_is_judged_before_reading(served: Served, length: str, status: int) -> None:
    body = mention_body()
    with served.connect() as sock:
        # Headers only: a length that were trusted would leave the server waiting for a body.
        sock.sendall(request(b"", headers=slack_headers(body), length=length))
        assert read_reply(sock).status == status
        assert closed_by_server(sock)


def test_conflicting_lengths_and_chunked_bodies_are_400(served: Served) -> None:
    body = mention_body()
    headers = slack_headers(body)
    twice = request(body, headers={**headers, "Content-Length": "3"})
    assert exchange(served, twice).status == 400
    chunked = request(b"0\r\n\r\n", headers={**headers, "Transfer-Encoding": "chunked"}, length="")
    assert exchange(served, chunked).status == 400


def test_a_body_shorter_than_its_length_times_out_then_closes(served: Served) -> None:
    body = mention_body()
    with served.connect() as sock:
        sock.sendall(request(body[:10], headers=slack_headers(body), length=str(len(body))))
        assert read_reply(sock).status == 408
        assert closed_by_server(sock)


def test_a_body_cut_short_by_the_client_is_400(served: Served) -> None:
    body = mention_body()
    data = request(body[:10], headers=slack_headers(body), length=str(len(body)))
    assert exchange(served, data, half_close=True).status == 400


@pytest.mark.parametrize(
    "timestamp",
    ["abc", "", "1e9", "-5", " 12", "1" * 40, "1\u00b23", str(int(time.time()) - 6 * 60)],
    # stable ids: parallel workers must collect the same names though the clock moved
    ids=["letters", "empty", "exponent", "negative", "space", "huge", "superscript", "stale"],
)
def test_bad_timestamps_are_401(served: Served, timestamp: str) -> None:
    body = mention_body()
    assert exchange(served, signed(body, timestamp=timestamp)).status == 401


def test_a_timestamp_in_the_future_is_401(served: Served) -> None:
    body = mention_body()
    assert exchange(served, signed(body, timestamp=str(int(time.time()) + 6 * 60))).status == 401


def test_missing_headers_and_bad_signatures_are_401(served: Served, slack: FakeSlack) -> None:
    body = mention_body()
    good = slack_headers(body)
    for drop in ("X-Slack-Request-Timestamp", "X-Slack-Signature"):
        headers = {k: v for k, v in good.items() if k != drop}
        assert exchange(served, request(body, headers=headers)).status == 401
    for forged in ("v0=" + "0" * 64, "v1=" + good["X-Slack-Signature"][3:], "v0=zz", ""):
        headers = {**good, "X-Slack-Signature": forged}
        assert exchange(served, request(body, headers=headers)).status == 401
    wrong_secret = request(body, headers=slack_headers(body, secret="not-the-secret"))
    assert exchange(served, wrong_secret).status == 401
    assert served.mentions == []


def test_a_refusal_survives_a_body_left_unread(served: Served) -> None:
    """401 from the headers alone, while the client is still sending a 900 KB body.

    Closing with unread input would reset the connection under the client's feet.
    """
    body = b"{" + b" " * 900_000 + b"}"
    headers = {"Content-Type": "application/json", "X-Slack-Signature": "v0=" + "0" * 64}
    with served.connect() as sock:
        sock.sendall(request(body, headers=headers))
        assert read_reply(sock).status == 401


def test_malformed_json_is_401_unsigned_and_400_signed(served: Served) -> None:
    junks = (
        b'{"type": "event_callback", ',
        b"[1, 2]",
        b"42",
        b"\xff\xfe{}",
        b'{"a": 1}x',
        b"[" * 100_000,
    )
    for junk in junks:
        unsigned = request(junk, headers={"Content-Type": "application/json"})
        assert exchange(served, unsigned).status == 401, junk
        assert exchange(served, signed(junk)).status == 400, junk


def test_malformed_form_bodies_signed_are_400(served: Served) -> None:
    form = "application/x-www-form-urlencoded"
    for junk in (urlencode({"payload": "{not json"}), urlencode({"payload": "[1]"})):
        body = junk.encode()
        assert exchange(served, signed(body, content_type=form)).status == 400, junk


def test_garbage_request_lines_and_huge_headers_get_4xx(served: Served) -> None:
    assert exchange(served, b"POST /slack/events HTTP/x.y\r\n\r\n").status == 400
    assert exchange(served, b"\x00\x01 / HTTP/1.1\r\n\r\n").status == 501
    with served.connect() as sock:
        sock.sendall(b"\x00\x01 nonsense\r\n\r\n")  # two words: an HTTP/0.9 request to the stdlib
        assert read_reply(sock).status == 400
        assert closed_by_server(sock)
    huge = request(b"", headers={"X-Junk": "a" * 70_000}, method="GET", path="/healthz")
    assert exchange(served, huge).status == 431


def test_a_forged_body_never_reaches_a_log(
    served: Served, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    line = f'"{MARKER}" ' + "x" * 200
    text = "\n".join([line] * 4000)  # about 900 KB, newlines included
    body = json.dumps({"type": "event_callback", "text": text}).replace("\\n", "\n").encode()
    assert 800_000 < len(body) < LIMITS.max_body
    headers = {**slack_headers(body), "X-Slack-Signature": "v0=" + "1" * 64}
    for _ in range(3):
        assert exchange(served, request(body, headers=headers)).status == 401
    unsigned = {"Content-Type": "application/json"}
    assert exchange(served, request(body, headers=unsigned)).status == 401
    logged = "\n".join(f"{r.name} {r.getMessage()}" for r in caplog.records)
    assert "signature mismatch" in logged  # the refusal itself is logged...
    assert MARKER not in logged  # ...without the body
    out, err = capfd.readouterr()
    assert MARKER not in out + err


def test_bolts_own_body_log_is_withheld(
    served: Served, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    """Should a request reach Bolt unverified, Bolt's INFO line would carry its body."""
    logging.getLogger("slack_bolt.RequestVerification").setLevel(logging.DEBUG)
    body = json.dumps({"type": "event_callback", "text": MARKER})
    headers = {"x-slack-request-timestamp": [str(int(time.time()))], "x-slack-signature": ["v0=0"]}
    dispatch = served.app.dispatch(BoltRequest(body=body, headers=headers))
    assert dispatch.status == 401
    bolt_lines = [r for r in caplog.records if r.name == "slack_bolt.RequestVerification"]
    assert bolt_lines, "Bolt no longer logs refused signatures; drop the filter"
    assert MARKER not in "\n".join(r.getMessage() for r in caplog.records)
    out, err = capfd.readouterr()
    assert MARKER not in out + err
