"""The deployment itself: processes on separate machines (each its own data directory), one
PostgreSQL database, the fake Pinecone and the fake Slack (issue 14, items 2 and 6).

Stateless web processes (a replica with an empty home answers alike and writes nothing
there; a new database is filled from Pinecone once); the scheduler's new commit in the web's
very next answer; one answer from two replicas given the same event; a vote through one
replica listed by `codecite feedback` on a third machine; PostgreSQL restarted or down
while answers are in flight; an unreachable database at start. The job table (kill -9 of a
scheduler, reindex reports reaching the chat) and shared rate limits are tested with them.
"""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from adapters.cli.logs import setup_logging
from adapters.slack.handlers import THANKS
from adapters.slack.render import VOTE_UP
from bot.config import Settings, load_file_config
from bot.core import CLI, Core
from bot.errors import StoreError
from bot.models import Answer
from bot.store import open_store
from tests.servers.openai_fake import FakeOpenAI
from tests.servers.pinecone_fake import FakePinecone
from tests.servers.slack_fake import BOT_USER_ID, FakeSlack
from tests.support.deployment import (
    CHECKOUT,
    DISCOUNTS,
    DISCOUNTS_PY,
    DISCOUNTS_PY_V2,
    REPO,
    Deployment,
    Hold,
    SlackReplica,
    commits_cited,
    dedicated_postgres,
    definition_lines,
    file_at,
    files_under,
    permalink_of,
    run_cli,
    same_answer,
    slack_env,
)
from tests.support.postgres import PASSWORD
from tests.support.slack_driver import CHANNEL, replies_in

DEFINED = "where is compute_volume_discount defined?"
CALLERS = "who calls compute_volume_discount?"
GENERAL = "how is the checkout total computed with the volume discount?"


@pytest.fixture(autouse=True)
def _instant_sdk_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("pinecone._internal.http_client._retry_sleep", lambda _s: None)


@pytest.fixture
def deployment(tmp_path: Path, database_url: str) -> Iterator[Deployment]:
    with FakePinecone(dimension=8) as pinecone:
        deploy = Deployment(tmp_path, database_url, pinecone)
        yield deploy
        deploy.close()


def _indexed(deployment: Deployment) -> Core:
    """The scheduler process, after its first run."""
    scheduler = deployment.core("scheduler")
    outcome = deployment.scheduler(scheduler).run_repo(REPO, "schedule")
    assert outcome is not None and outcome.chunks > 0
    return scheduler


def _answers(core: Core) -> dict[str, Answer]:
    asked = {q: core.ask(q, CLI) for q in (DEFINED, CALLERS, GENERAL)}
    return asked | {"map": core.repo_map(None, CLI)}


# -- item 2: stateless bot processes -------------------------------------------------------------


def test_a_second_web_process_with_an_empty_home_answers_exactly_like_the_first(
    deployment: Deployment,
) -> None:
    scheduler = _indexed(deployment)
    commit = deployment.repo.head()
    first_core = deployment.core("web-1")
    first = _answers(first_core)
    listed = len(deployment.pinecone.calls("/vectors/list"))
    second_core = deployment.core("web-2")
    second = _answers(second_core)
    # `status` too: the scheduler's runs and next run, read from the database.
    status = second_core.run_command("status", CLI).text
    assert status == first_core.run_command("status", CLI).text
    assert f"main@{commit[:7]}" in status and "last run" in status and "next run" in status
    # A fresh process beside a filled database rebuilds nothing from Pinecone.
    assert len(deployment.pinecone.calls("/vectors/list")) == listed
    for key, answer in first.items():
        assert same_answer(answer, second[key]), key
    start, end = definition_lines(DISCOUNTS_PY, "compute_volume_discount")
    defined, callers, found = second[DEFINED], second[CALLERS], second["map"]
    assert f"defined in **{DISCOUNTS}:L{start}-L{end}**" in defined.text  # the symbol table
    [site] = [c for c in defined.citations if c.path == DISCOUNTS]
    assert permalink_of(site) == (commit, DISCOUNTS, start, end)
    assert "Called from 1 place" in callers.text
    assert any(c.path == CHECKOUT for c in callers.citations)
    assert "Most referenced symbols" in found.text and "compute_volume_discount" in found.text
    for answer in second.values():
        assert [(f.repo, f.commit) for f in answer.freshness] == [(REPO, commit)]
        assert set(commits_cited(answer)) == {commit}
    second_core.close()
    scheduler.close()
    # Nothing a web process needs lives on its disk: it wrote nothing there.
    assert files_under(deployment.home("web-1")) == files_under(deployment.home("web-2")) == []


def test_a_web_process_with_embeddings_keeps_nothing_on_its_disk(
    tmp_path: Path, database_url: str
) -> None:
    """Dense search and the embedding cache too: the question's vector is cached in the
    database, not in `embeddings.sqlite` of the data directory."""
    with FakeOpenAI(dimensions=8) as openai, FakePinecone(dimension=8) as pinecone:
        deployment = Deployment(tmp_path, database_url, pinecone, openai=openai)
        scheduler = _indexed(deployment)
        web = deployment.core("web")
        answer = web.ask(GENERAL, CLI)
        assert answer.citations and pinecone.bodies("/query")[-1].get("vector")
        assert any(c.path == CHECKOUT for c in answer.citations)
        web.close()
        scheduler.close()
        deployment.close()
    assert files_under(deployment.home("web")) == []


def test_the_first_process_on_a_new_database_fills_it_from_pinecone(
    deployment: Deployment,
) -> None:
    """A deployment moving from the SQLite state file to PostgreSQL: Pinecone holds the
    repository, the new database nothing. The first process to start rebuilds the shared
    state from Pinecone; every later one finds it full and rebuilds nothing."""
    old = deployment.settings("before")
    old = old.model_copy(update={"database_url": None})  # the SQLite state file in its home
    before = Core.from_settings(old, load_file_config(deployment.config_path))
    before.index_repo(str(deployment.repo.path), name=REPO)
    before.close()
    commit = deployment.repo.head()
    listed = len(deployment.pinecone.calls("/vectors/list"))

    first = deployment.core("web-1")
    assert [s.commit for s in first.index.repo_states()] == [commit]
    rebuilt = len(deployment.pinecone.calls("/vectors/list"))
    assert rebuilt > listed
    second = deployment.core("web-2")
    assert [s.commit for s in second.index.repo_states()] == [commit]
    assert len(deployment.pinecone.calls("/vectors/list")) == rebuilt
    hits = second.search("compute_volume_discount", CLI, top_k=3)
    assert hits and hits[0].chunk.path == DISCOUNTS


# -- item 6: the deployment's own tests ----------------------------------------------------------


def test_the_web_process_answers_with_the_commit_the_scheduler_indexed_last(
    deployment: Deployment,
) -> None:
    scheduler = _indexed(deployment)
    jobs = deployment.scheduler(scheduler)  # as `codecite schedule` installs them
    web = deployment.core("web")
    old = deployment.repo.head()
    assert set(commits_cited(web.ask(DEFINED, CLI))) == {old}

    deployment.repo.write(DISCOUNTS, DISCOUNTS_PY_V2)
    new = deployment.repo.commit("discount figures as constants")
    outcome = jobs.run_repo(REPO, "push")
    assert outcome is not None and outcome.commit == new

    # The web process's very next answer: the new commit, lines of the new file.
    answer = web.ask(DEFINED, CLI)
    [freshness] = answer.freshness
    assert freshness.commit == new and f"main@{new[:7]}" in freshness.describe()
    start, end = definition_lines(DISCOUNTS_PY_V2, "compute_volume_discount")
    assert (start, end) != definition_lines(DISCOUNTS_PY, "compute_volume_discount")
    [site] = [c for c in answer.citations if c.path == DISCOUNTS]
    assert permalink_of(site) == (new, DISCOUNTS, start, end)
    lines = DISCOUNTS_PY_V2.splitlines()[start - 1 : end]
    assert lines[0].startswith("def compute_volume_discount(") and "return 0" in lines[-1]
    for later in (web.ask(GENERAL, CLI), web.repo_map(None, CLI), web.ask(CALLERS, CLI)):
        assert set(commits_cited(later)) == {new}
        for citation in later.citations:  # every cited range is the new file's
            text = file_at(deployment.repo, new, citation.path).splitlines()
            assert citation.end_line <= len(text)
    mapped = web.repo_map(None, CLI)
    assert f"{DISCOUNTS}:L{start}-L{end}" in mapped.text  # key symbols at the new lines


@pytest.fixture
def slack(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        fake.add_conversation(CHANNEL, "public")
        for name, value in slack_env(fake).items():
            monkeypatch.setenv(name, value)
        yield fake


def _mention(slack: FakeSlack, text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A user's mention, stored in the fake; the `app_mention` and `message` events Slack sends."""
    said = f"<@{BOT_USER_ID}> {text}"
    msg = slack.add_message(CHANNEL, "UASKER", said)
    event = {"user": "UASKER", "text": said, "ts": msg["ts"], "channel": CHANNEL}
    return msg, event


def test_two_web_replicas_given_the_same_slack_event_answer_once(
    deployment: Deployment, slack: FakeSlack
) -> None:
    _indexed(deployment).close()
    replicas = [SlackReplica(deployment, f"web-{i}", slack) for i in (1, 2)]
    try:
        msg, event = _mention(slack, DEFINED)
        mention = {"type": "app_mention", **event}
        message = {"type": "message", "channel_type": "channel", **event}
        deliveries = [  # Slack's delivery, its retry, and the `message` twin, to both replicas
            (replica.driver, body, event_id, retry)
            for replica in replicas
            for body, event_id, retry in (
                (mention, "Ev0DEPLOY1", None),
                (mention, "Ev0DEPLOY1", 1),
                (message, "Ev0DEPLOY2", None),
            )
        ]
        with ThreadPoolExecutor(len(deliveries)) as pool:
            statuses = list(
                pool.map(lambda d: d[0].event(d[1], event_id=d[2], retry=d[3])[0], deliveries)
            )
        assert statuses == [200] * len(deliveries)
        slack.wait_for(lambda: replies_in(slack, CHANNEL, msg["ts"]) or None)
    finally:
        for replica in replicas:
            replica.close()  # every accepted answer has finished
    [reply] = replies_in(slack, CHANNEL, msg["ts"])
    assert "compute_volume_discount" in json.dumps(reply)
    assert files_under(deployment.home("web-1")) == files_under(deployment.home("web-2")) == []


def test_a_vote_through_one_replica_shows_in_codecite_feedback_run_anywhere(
    deployment: Deployment, slack: FakeSlack
) -> None:
    _indexed(deployment).close()
    asked, voted = (
        SlackReplica(deployment, "web-1", slack),
        SlackReplica(deployment, "web-2", slack),
    )
    try:
        msg, event = _mention(slack, DEFINED)
        assert asked.driver.event({"type": "app_mention", **event})[0] == 200
        [post] = slack.wait_for(lambda: replies_in(slack, CHANNEL, msg["ts"]) or None)
        buttons = {
            e["action_id"]: e["value"]
            for block in post["blocks"]
            if block.get("block_id") == "codecite_feedback"
            for e in block["elements"]
        }
        # The click reaches the other replica (a load balancer's choice).
        assert voted.driver.click(VOTE_UP, buttons[VOTE_UP], user="UVOTER", message=post) == 200
        [thanks] = slack.wait_for(
            lambda: [c for c in slack.calls if c.method.startswith("response_url:")] or None
        )
        assert thanks.params["text"] == THANKS
    finally:
        asked.close()
        voted.close()
    shown = deployment.cli("ops-laptop", "feedback")  # a third machine, an empty home
    assert shown.returncode == 0, shown.stderr
    [line] = [ln for ln in shown.stdout.splitlines() if "UVOTER" in ln]
    assert "👍" in line and f"slack/{CHANNEL}" in line and DEFINED in line
    assert f"{DISCOUNTS}:L" in line


def _reply_texts(slack: FakeSlack, asked: list[dict[str, Any]]) -> list[str]:
    """The one reply in each asked thread (waits for all of them)."""

    def all_there() -> list[list[dict[str, Any]]] | None:
        threads = [replies_in(slack, CHANNEL, m["ts"]) for m in asked]
        return threads if all(threads) else None

    threads = slack.wait_for(all_there, timeout=40)
    assert [len(t) for t in threads] == [1] * len(asked)  # one reply each, never two
    return [_visible_text(t[0]) for t in threads]


def _visible_text(post: dict[str, Any]) -> str:
    """The message's section blocks (what Slack shows), else its fallback text."""
    parts = [
        str(block["text"].get("text") or "")
        for block in post.get("blocks") or []
        if isinstance(block.get("text"), dict)
    ]
    return "\n".join(parts) or str(post.get("text") or "")


def _ask_many(driver: Any, slack: FakeSlack, count: int) -> list[dict[str, Any]]:
    asked = []
    for _ in range(count):
        msg, event = _mention(slack, GENERAL)
        assert driver.event({"type": "app_mention", **event})[0] == 200
        asked.append(msg)
    return asked


def _is_answer_or_one_sentence(text: str) -> str:
    if "checkout_total" in text:
        return "answered"
    assert "Traceback" not in text and "psycopg" not in text.lower(), text
    assert PASSWORD not in text, text
    assert text.count("\n") == 0 and "incident" in text, text  # one sentence and its reference
    return "sentence"


def test_postgres_restarted_mid_answer_then_the_next_question_works(
    tmp_path: Path, slack: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    outcomes: list[str] = []
    with dedicated_postgres() as server, FakePinecone(dimension=8) as pinecone:
        deployment = Deployment(tmp_path, server.new_database(), pinecone)
        _indexed(deployment).close()
        replica = SlackReplica(deployment, "web", slack)
        index = replica.core.index
        try:
            # 1. Restarted while three answers are in flight (held at their Pinecone query).
            hold = Hold()
            monkeypatch.setattr(index, "lexical", hold.wrap(index.lexical))
            asked = _ask_many(replica.driver, slack, 3)
            hold.wait_entered(3)
            server.stop("immediate")
            server.start()
            hold.release.set()
            outcomes += map(_is_answer_or_one_sentence, _reply_texts(slack, asked))

            # 2. Down while two answers go on: they are answered all the same (the state as
            #    last read, limits and claims in the process), never a traceback.
            hold = Hold()
            monkeypatch.setattr(index, "lexical", hold.wrap(index.lexical.__wrapped__))
            asked = _ask_many(replica.driver, slack, 2)
            hold.wait_entered(2)
            server.stop("immediate")
            hold.release.set()
            down = list(map(_is_answer_or_one_sentence, _reply_texts(slack, asked)))
            outcomes += down
            server.start()

            # 3. The next question works, without restarting the bot (the pool reconnects).
            [text] = _reply_texts(slack, _ask_many(replica.driver, slack, 1))
            assert _is_answer_or_one_sentence(text) == "answered"
        finally:
            replica.close()
    assert outcomes[:3] == ["answered"] * 3, outcomes  # the server was back before they went on
    assert down == ["answered"] * 2, down  # the database away degrades, it does not stop


def test_a_call_while_the_server_is_down_fails_with_its_reason_not_the_pools_timeout(
    tmp_path: Path,
) -> None:
    """Under a running pool whose connections died, the call asks the server directly: the
    user hears at once that the database cannot be reached (and the log says why), rather
    than after the pool's ten-second wait ("couldn't get a connection")."""
    with dedicated_postgres() as server:
        stores = open_store(tmp_path / "home", database_url=server.new_database())
        try:
            assert stores.feedback.list() == []  # the pool is open and warm
            server.stop("immediate")
            with pytest.raises(StoreError) as raised:
                stores.feedback.list()
            assert "could not be reached" in raised.value.operator_message
            assert "127.0.0.1" not in raised.value.user_message
            assert "refused" in raised.value.detail.lower(), raised.value.detail
            assert PASSWORD not in raised.value.user_message + raised.value.detail
            server.start()
            assert stores.feedback.list() == []  # and the same pool serves again
        finally:
            stores.close()


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # free once closed: nothing listens there


UNREACHABLE_PASSWORD = "hunter2-never-shown"


@pytest.mark.parametrize("where", ["closed port", "unresolvable host"])
@pytest.mark.parametrize("command", [["status"], ["serve", "--slack"], ["schedule"]])
def test_an_unreachable_database_at_start_is_one_line_naming_the_host(
    tmp_path: Path, where: str, command: list[str]
) -> None:
    host = f"127.0.0.1:{_closed_port()}" if where == "closed port" else "db.invalid:5432"
    url = f"postgresql://codecite:{UNREACHABLE_PASSWORD}@{host}/codecite?sslmode=prefer"
    home = tmp_path / "home"
    env = {
        "CODECITE_HOME": str(home),
        "CODECITE_DATABASE_URL": url,
        "SLACK_BOT_TOKEN": "xoxb-deploy-test",
        "SLACK_SIGNING_SECRET": "deploy-test-secret",
        "CODECITE_SLACK_API_URL": f"http://127.0.0.1:{_closed_port()}/api/",
    }
    done = run_cli(env, *command, timeout=60)
    assert done.returncode != 0
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    assert f"({host}/codecite)" in errors[0] and "could not be reached" in errors[0]
    logs = "".join(p.read_text(errors="replace") for p in home.rglob("*.log"))
    for text in (done.stdout, done.stderr, logs):
        assert UNREACHABLE_PASSWORD not in text and "Traceback" not in text
    if command == ["status"]:  # a terminal command: the one line and nothing else
        assert done.stderr.strip() == errors[0], done.stderr


def test_the_database_password_is_redacted_from_every_log_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Whatever a library logs (psycopg's pool logs its connection errors itself), the
    database URL and its password never reach a process's log."""
    url = f"postgresql://codecite:{UNREACHABLE_PASSWORD}@db.invalid:5432/codecite"
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    try:
        setup_logging(Settings(CODECITE_DATABASE_URL=url), server=True)  # type: ignore[call-arg]
        logging.getLogger("psycopg.pool").warning("error connecting to %s", url)
        logging.getLogger("psycopg").warning("password %s refused", UNREACHABLE_PASSWORD)
    finally:
        root.handlers[:], root.level = saved
    logged = capsys.readouterr().err
    assert "error connecting to ***" in logged and "password *** refused" in logged
    assert UNREACHABLE_PASSWORD not in logged
