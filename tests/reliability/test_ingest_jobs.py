"""One job path for re-ingest, across processes that share only PostgreSQL and Pinecone.

A web-side Core and a scheduler-side Core, each with its own data directory, on one
throwaway PostgreSQL database, the fake Pinecone and the fake OpenAI, over a real git
repository pushed to a bare "remote":
- a signed push webhook to the web process's route records a job; the web process
  ingests nothing; the scheduler's runner claims and runs it; the web's next search
  and answer carry the new commit;
- a chat `reindex` through the real Slack Bolt app ends with the report posted where
  it was asked, though another process ran it;
- a scheduler child killed with -9 mid-ingest leaves the old index answering, and a
  second runner finishes the job once the lease has passed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from adapters.common.http_routes import start_routed
from adapters.webhook import QueuedReindex, webhook_route
from bot.config import Settings
from bot.context import CLI
from bot.core import Core
from bot.store.jobs import DONE, QUEUED, RUNNING
from tests.servers.openai_fake import FakeOpenAI
from tests.servers.pinecone_fake import FakePinecone
from tests.servers.slack_fake import BOT_TOKEN, FakeSlack
from tests.support.gitrepo import GitRepo
from tests.support.jobs import running_jobs, scheduler_child, shared_core, shared_services
from tests.support.shop import build_shop
from tests.support.slack_driver import CHANNEL, SIGNING_SECRET, Driver, _run

HOOK_SECRET = "push-hook-secret"
NEW_CODE = '''"""Refunds."""


def refund_partial_shipment(order, shipped):
    """Refund what was never shipped."""
    return order.total - shipped.total
'''


@pytest.fixture(autouse=True)
def _instant_sdk_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("pinecone._internal.http_client._retry_sleep", lambda _s: None)


@dataclass
class World:
    work: GitRepo
    remote: Path
    openai: FakeOpenAI
    pinecone: FakePinecone
    env: Callable[[str], dict[str, str]]  # a process's environment, by data directory name

    def core(self, name: str) -> Core:
        return shared_core(Settings(**self.env(name)))  # type: ignore[arg-type]

    def push_new_commit(self) -> str:
        self.work.write("shop/refunds.py", NEW_CODE)
        head = self.work.commit("refunds")
        self.work.push(self.remote)
        return head


@pytest.fixture
def world(database_url: str, tmp_path: Path) -> Iterator[World]:
    work = GitRepo(tmp_path / "shop")
    build_shop(work)
    remote = work.bare_clone(tmp_path / "shop.git")
    config = tmp_path / "codecite.toml"
    config.write_text(
        f'admins = ["UADMIN"]\n[[repos]]\nname = "shop"\nurl = "file://{remote}"\n',
        encoding="utf-8",
    )
    with shared_services(tmp_path, database_url, config) as services:
        yield World(work, remote, services.openai, services.pinecone, services.env)


def never_ingests(core: Core, monkeypatch: pytest.MonkeyPatch) -> None:
    """The web process must not ingest: its ingest line fails the test if it ever runs."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the web process ingested")

    monkeypatch.setattr(core._ingest, "index_repo", refuse)


def wait_for(probe: Callable[[], Any], timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := probe()):
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.05)
    return value


def indexed_commit(core: Core) -> str:
    [state] = core.index.repo_states()
    return state.commit


def post_push(port: int, clone_url: str) -> int:
    body = json.dumps({"ref": "refs/heads/main", "repository": {"clone_url": clone_url}})
    signature = (
        "sha256=" + hmac.new(HOOK_SECRET.encode(), body.encode(), hashlib.sha256).hexdigest()
    )
    headers = {"X-GitHub-Event": "push", "X-Hub-Signature-256": signature}
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/webhooks/github", data=body.encode(), headers=headers
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_a_push_to_the_web_process_is_ingested_by_the_scheduler(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    scheduler = world.core("scheduler")
    first = scheduler.index_repo(f"file://{world.remote}", name="shop").commit
    web = world.core("web")
    never_ingests(web, monkeypatch)
    assert indexed_commit(web) == first
    new = world.push_new_commit()

    server = start_routed([webhook_route(QueuedReindex(web), HOOK_SECRET)], port=0)
    try:
        assert post_push(server.port, f"file://{world.remote}") == 202
        assert post_push(server.port, f"file://{world.remote}") == 202  # joins the queued job
    finally:
        server.stop()
    time.sleep(0.5)
    assert indexed_commit(web) == first  # nobody ran it yet: no runner is up

    with running_jobs(scheduler):
        wait_for(lambda: indexed_commit(web) == new)
    hits = web.search("refund a partial shipment", CLI, top_k=3)
    assert hits[0].chunk.path == "shop/refunds.py"
    answer = web.ask("how do we refund a partial shipment?", CLI)
    assert answer.freshness[0].commit == new
    assert any(c.path == "shop/refunds.py" for c in answer.citations)
    runs = [scheduler.runs.last("shop"), web.runs.last("shop")]  # one shared run log
    assert all(r is not None and r.ok and r.trigger == "webhook" for r in runs)
    assert runs[0] == runs[1]


def test_a_chat_reindex_reaches_the_chat_that_asked(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    scheduler = world.core("scheduler")
    scheduler.index_repo(f"file://{world.remote}", name="shop")
    new = world.push_new_commit()
    with FakeSlack() as slack:
        slack.add_conversation(CHANNEL, "public")
        monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
        monkeypatch.setenv("SLACK_SIGNING_SECRET", SIGNING_SECRET)
        monkeypatch.setenv("CODECITE_SLACK_API_URL", slack.base_url)
        web = world.core("web")
        never_ingests(web, monkeypatch)
        app = _run(web)
        try:
            with running_jobs(scheduler):
                _, _, response_url = Driver(slack, app.server.url()).command(
                    "reindex shop", user="UADMIN"
                )
                rid = response_url.rsplit("/", 1)[1]
                [reply] = slack.wait_for(
                    lambda: [c for c in slack.calls if c.method == f"response_url:{rid}"],
                    timeout=60,
                )
        finally:
            app.server.stop()
            app.bot.close()
    text = reply.params["text"]
    assert text.startswith(f"• shop: {new[:7]}, 1 files updated") and "+" in text
    assert "incident" not in text
    last = web.runs.last("shop")
    assert last is not None and last.trigger == "slack command" and last.commit == new


def test_a_scheduler_killed_mid_ingest_is_replaced_and_the_old_index_answers_meanwhile(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    backup = world.core("backup")
    first = backup.index_repo(f"file://{world.remote}", name="shop").commit
    web = world.core("web")
    never_ingests(web, monkeypatch)
    new = world.push_new_commit()

    child = scheduler_child(world.env("doomed"))
    try:
        embedded = len(world.openai.embeddings_served)
        requests = len(world.openai.requests)
        world.openai.delay_next(60)  # the child's embedding call hangs: it is mid-ingest
        assert web.queue_reindex("shop", trigger="webhook")
        wait_for(lambda: len(world.openai.requests) > requests)
        (job_id,) = wait_for(
            lambda: [
                j.id for j in web.stores.jobs.results(range(1, 20)).values() if j.state == RUNNING
            ]
        )
        assert backup.stores.locks.busy("shop")  # the child holds the repository's lock
        child.kill()  # kill -9, mid-ingest
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert len(world.openai.embeddings_served) == embedded  # its embeddings never came back
    hits = web.search("where do we retry failed webhooks?", CLI, top_k=3)
    assert hits and indexed_commit(web) == first  # the old index answers meanwhile
    assert web.ask("where do we retry failed webhooks?", CLI).freshness[0].commit == first
    (job,) = web.stores.jobs.results([job_id]).values()
    assert job.state == RUNNING and job.attempts == 1  # its runner's lease is running out

    with running_jobs(backup):  # the other scheduler takes the job over after the lease
        done = wait_for(lambda: (j := web.stores.jobs.results([job_id])[job_id]).finished and j, 60)
    assert done.state == DONE and done.attempts == 2
    assert done.text.startswith(f"• shop: {new[:7]}")
    assert indexed_commit(web) == new
    assert web.search("refund a partial shipment", CLI, top_k=1)[0].chunk.path == (
        "shop/refunds.py"
    )
    assert not backup.stores.locks.busy("shop")
    assert QUEUED not in {j.state for j in web.stores.jobs.results(range(1, 20)).values()}
