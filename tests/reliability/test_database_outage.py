"""The shared database away: answers go on, nothing is said twice, nothing is lost (issue 27).

Three processes' parts over one throwaway PostgreSQL server of the test's own, the fake
Pinecone and the fake Slack, as tests/reliability/test_deployment.py has them: a
scheduler indexes the repository, a web replica answers Slack. The server is stopped
(`pg_ctl stop -m immediate`) and started again while questions keep arriving:

- every question is answered while it is down (the index's state, the symbol table and
  the rate limits were all read from it), and the one sentence a user may get names no
  host and no variable;
- an event Slack delivers again (its retries, while the first delivery is answered) is
  answered once by a process, whether or not the database can say it was claimed;
- the per-user limit still holds, counted in the process meanwhile;
- a push received then is answered 503 with Retry-After, and queued as a job once the
  database is back, for the scheduler's runner.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adapters.common.http_routes import start_routed
from adapters.serve import push_routes
from bot.config import RepoConfig
from bot.store.jobs import QUEUED
from tests.servers.pinecone_fake import FakePinecone
from tests.servers.slack_fake import BOT_USER_ID, FakeSlack
from tests.support.deployment import (
    REPO,
    WEB_URL,
    Deployment,
    SlackReplica,
    dedicated_postgres,
    slack_env,
)
from tests.support.postgres import PostgresServer
from tests.support.raw_http import connect, exchange, raw_request
from tests.support.slack_driver import CHANNEL, replies_in

SECRET = "outage-webhook-secret"
QUESTIONS = (
    "where is compute_volume_discount defined?",
    "how is the checkout total computed with the volume discount?",
    "who calls compute_volume_discount?",
)


@pytest.fixture(autouse=True)
def _instant_sdk_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("pinecone._internal.http_client._retry_sleep", lambda _s: None)


@pytest.fixture
def slack(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        fake.add_conversation(CHANNEL, "public")
        for name, value in slack_env(fake).items():
            monkeypatch.setenv(name, value)
        yield fake


@pytest.fixture
def deployed(
    tmp_path: Path, slack: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[PostgresServer, Deployment, SlackReplica]]:
    monkeypatch.setenv("CODECITE_WEBHOOK_SECRET", SECRET)
    with dedicated_postgres() as server, FakePinecone(dimension=8) as pinecone:
        deployment = Deployment(tmp_path, server.new_database(), pinecone)
        scheduler = deployment.core("scheduler")
        assert deployment.scheduler(scheduler).run_repo(REPO, "schedule") is not None
        scheduler.close()
        replica = SlackReplica(deployment, "web", slack)
        try:
            yield server, deployment, replica
        finally:
            replica.close()
            deployment.close()


def _ask(
    replica: SlackReplica, slack: FakeSlack, text: str, *, retries: int = 0, user: str = "UASKER"
) -> dict[str, Any]:
    """A mention, and Slack's redeliveries of its event (as when the ack seemed late)."""
    said = f"<@{BOT_USER_ID}> {text}"
    msg = slack.add_message(CHANNEL, user, said)
    event = {"type": "app_mention", "user": user, "text": said, "ts": msg["ts"]}
    event_id = f"Ev{msg['ts'].replace('.', '')}"
    for attempt in range(retries + 1):
        status, _ = replica.driver.event(
            {**event, "channel": CHANNEL}, event_id=event_id, retry=attempt or None
        )
        assert status == 200
    return msg


def _replies(slack: FakeSlack, asked: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    def answers(message: dict[str, Any]) -> list[dict[str, Any]]:
        return [p for p in replies_in(slack, CHANNEL, message["ts"]) if not _queued(p)]

    def all_there() -> list[list[dict[str, Any]]] | None:
        threads = [answers(m) for m in asked]  # a "You're #3 in line" note is not an answer yet
        return threads if all(threads) else None

    slack.wait_for(all_there, timeout=60)
    time.sleep(1.0)  # a second reply would come now, if one were coming
    return [answers(m) for m in asked]


def _queued(post: dict[str, Any]) -> bool:
    """A note that the question waits in line (under load), not an answer."""
    return str(post.get("text") or "").startswith("You're #")


def _text(post: dict[str, Any]) -> str:
    blocks = [str((b.get("text") or {}).get("text") or "") for b in post.get("blocks") or []]
    return "\n".join(blocks) or str(post.get("text") or "")


def _plain(text: str, server: PostgresServer) -> None:
    """What a chat user may read: no host, port, variable or driver text."""
    for leak in ("127.0.0.1", str(server.port), "CODECITE_DATABASE_URL", "psycopg", "Traceback"):
        assert leak not in text, text


def test_questions_are_answered_once_while_the_database_is_down(
    deployed: tuple[PostgresServer, Deployment, SlackReplica], slack: FakeSlack
) -> None:
    server, _, replica = deployed
    before = _ask(replica, slack, QUESTIONS[0])
    _replies(slack, [before])  # answered while the database was up (as readiness probes do)
    server.stop("immediate")
    try:
        asked = [_ask(replica, slack, q, retries=3) for q in QUESTIONS]
        threads = _replies(slack, [before, *asked])
    finally:
        server.start()
    assert [len(t) for t in threads] == [1] * 4  # one reply each, retries or not
    for [post] in threads[1:]:
        text = _text(post)
        _plain(text, server)
        assert "compute_volume_discount" in text or "checkout_total" in text, text
    after = _ask(replica, slack, QUESTIONS[1])  # back: the same process, no restart
    [[post]] = _replies(slack, [after])
    assert "checkout_total" in _text(post)


def test_answers_go_on_while_the_database_stops_and_starts_under_load(
    deployed: tuple[PostgresServer, Deployment, SlackReplica], slack: FakeSlack
) -> None:
    server, _, replica = deployed
    asked: list[dict[str, Any]] = []
    stop = threading.Event()

    def load() -> None:
        number = 0
        while not stop.is_set():
            question = f"{QUESTIONS[number % 3]} ({number})"
            asked.append(_ask(replica, slack, question, retries=1, user=f"U{number:04d}"))
            number += 1
            time.sleep(0.2)

    asker = threading.Thread(target=load)
    asker.start()
    try:
        time.sleep(1.5)
        server.stop("immediate")
        time.sleep(3.0)
        server.start()
        time.sleep(1.5)
    finally:
        stop.set()
        asker.join()
    threads = _replies(slack, asked)
    assert len(asked) >= 10
    assert [len(t) for t in threads] == [1] * len(asked)
    for [post] in threads:
        _plain(_text(post), server)
    texts = [_text(t[0]) for t in threads]
    answered = [t for t in texts if "compute_volume_discount" in t or "checkout_total" in t]
    assert len(answered) == len(asked), texts


def test_the_user_limit_is_counted_in_the_process_while_the_database_is_down(
    deployed: tuple[PostgresServer, Deployment, SlackReplica], slack: FakeSlack
) -> None:
    server, _, replica = deployed
    limit = replica.core.config.limits.per_user_per_minute
    server.stop("immediate")
    try:
        asked = [_ask(replica, slack, f"{QUESTIONS[0]} ({n})") for n in range(limit + 2)]
        threads = _replies(slack, asked)
    finally:
        server.start()
    texts = [_text(t[0]) for t in threads]
    refused = [t for t in texts if "asking faster than" in t]
    assert len(refused) == 2, texts  # the limit held without its shared count
    for text in texts:
        _plain(text, server)


def _push(port: int) -> tuple[int, dict[str, str], dict[str, Any]]:
    import hashlib
    import hmac

    body = json.dumps({"ref": "refs/heads/main", "repository": {"html_url": WEB_URL}}).encode()
    signature = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    headers = {
        "X-GitHub-Event": "push",
        "X-Hub-Signature-256": signature,
        "Content-Type": "application/json",
    }
    data = raw_request(body, path="/webhooks/github", headers=headers)

    class Target:
        def connect(self):  # type: ignore[no-untyped-def]
            return connect(port)

    reply = exchange(Target(), data)
    return reply.status, reply.headers, json.loads(reply.body or b"{}")


def test_a_push_while_the_database_is_down_is_503_and_queued_once_it_is_back(
    deployed: tuple[PostgresServer, Deployment, SlackReplica],
) -> None:
    server, _, replica = deployed
    config = replica.core.config  # the repository by its remote URL, as pushes name it
    repo = RepoConfig(name=REPO, url=f"{WEB_URL}.git")
    replica.core.use_config(config.model_copy(update={"repos": (repo,)}))
    web = start_routed(push_routes(replica.core), port=0, host="127.0.0.1", label="web")
    try:
        server.stop("immediate")
        try:
            status, headers, body = _push(web.port)
            assert status == 503, body
            assert int(headers["retry-after"]) > 0
            assert "error" in body and "127.0.0.1" not in json.dumps(body)
        finally:
            server.start()
        jobs = replica.core.stores.jobs
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and jobs.queued() == 0:
            time.sleep(0.2)
        assert jobs.queued() == 1  # kept, and recorded once the database answered
        claimed = jobs.claim("runner", lease=30)
        assert claimed is not None and claimed.repo == REPO and claimed.trigger == "webhook"
        assert claimed.state != QUEUED
    finally:
        web.stop()
