"""The /codecite slash command and the feedback buttons through the real Bolt app."""

from __future__ import annotations

import json
from typing import Any

import pytest

from adapters.slack.handlers import REINDEXING, THANKS, WORKING
from adapters.slack.render import VOTE_DOWN, VOTE_UP
from bot.core import Core
from bot.runtime.queue import AnswerQueue
from tests.servers.slack_fake import Call, FakeSlack
from tests.support.jobs import running_jobs
from tests.support.slack_driver import CHANNEL, Driver, Gate, Recorded

QUESTION = "where do we retry failed webhooks?"


def _responses(slack: FakeSlack, response_url: str) -> list[Call]:
    rid = response_url.rsplit("/", 1)[1]
    return [c for c in slack.calls if c.method == f"response_url:{rid}" and c.ok]


def _top_level_posts(slack: FakeSlack, channel: str) -> list[dict[str, Any]]:
    return [m for m in slack.bot_posts(channel) if "thread_ts" not in m]


def test_ask_is_acknowledged_before_the_slow_answer_is_posted(
    slack: FakeSlack, driver: Driver, core: Core, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate()
    gate.install(monkeypatch, core)
    status, ack, _ = driver.command(f"ask {QUESTION}")
    # The HTTP response (the ack) is back; the answer is still being worked on.
    assert status == 200 and json.loads(ack)["text"] == WORKING
    assert gate.entered.wait(timeout=15)
    assert not slack.calls_to("chat.postMessage")
    gate.release.set()
    [post] = slack.wait_for(lambda: _top_level_posts(slack, CHANNEL))
    assert post["text"].startswith(f"*<@UASKER> asked:*\n> {QUESTION}")
    assert "shop/webhooks.py:L" in post["text"]
    assert post["blocks"][-1]["type"] == "actions"


def test_bare_question_is_an_ask(slack: FakeSlack, driver: Driver, recorded: Recorded) -> None:
    assert driver.command(QUESTION)[0] == 200
    slack.wait_for(lambda: _top_level_posts(slack, CHANNEL))
    assert recorded.asks[0][0] == QUESTION


@pytest.mark.parametrize(
    "question",
    ["how is the webhook payload retried?", "where is payload=1 sent?", "payloads"],
)
def test_a_question_that_says_payload_is_answered(
    slack: FakeSlack, driver: Driver, recorded: Recorded, question: str
) -> None:
    """Bolt reads any form mentioning "payload" as a button's payload; a command is not one."""
    status, ack, _ = driver.command(f"ask {question}", channel="C0SHOP")
    assert status == 200 and json.loads(ack)["text"] == WORKING
    [post] = slack.wait_for(lambda: _top_level_posts(slack, "C0SHOP"))
    assert recorded.asks[0][0] == question and recorded.asks[0][1].channel == "C0SHOP"
    assert post["blocks"][-1]["type"] == "actions"


@pytest.mark.parametrize("line", ["status", "repos", "help", ""])
def test_status_repos_help_are_ephemeral(slack: FakeSlack, driver: Driver, line: str) -> None:
    status, ack, response_url = driver.command(line)
    assert status == 200 and ack == ""  # a plain ack: nothing shown until the reply
    [reply] = slack.wait_for(lambda: _responses(slack, response_url))
    assert reply.params["response_type"] == "ephemeral"
    assert reply.params["text"]
    if line == "repos":
        assert "shop" in reply.params["text"] and "billing" in reply.params["text"]
    assert not slack.calls_to("chat.postMessage")


def test_reindex_by_a_non_admin_is_refused(slack: FakeSlack, driver: Driver) -> None:
    _, _, response_url = driver.command("reindex shop", user="UNOBODY")
    [reply] = slack.wait_for(lambda: _responses(slack, response_url))
    assert reply.params["response_type"] == "ephemeral"
    assert reply.params["text"].startswith("Only codecite admins can do that.")
    assert "incident" in reply.params["text"]


def test_reindex_by_an_admin_runs(slack: FakeSlack, driver: Driver, core: Core) -> None:
    with running_jobs(core):  # the scheduler's runner (here in the same process)
        _, ack, response_url = driver.command("reindex shop", user="UADMIN")
        assert json.loads(ack)["text"] == REINDEXING
        [reply] = slack.wait_for(lambda: _responses(slack, response_url), timeout=60)
    assert "shop" in reply.params["text"] and "incident" not in reply.params["text"]


def test_not_in_channel_falls_back_to_the_response_url(slack: FakeSlack, driver: Driver) -> None:
    slack.not_member.add("C0PRIVATE")
    _, _, response_url = driver.command(f"ask {QUESTION}", channel="C0PRIVATE")
    [reply] = slack.wait_for(lambda: _responses(slack, response_url))
    assert reply.params["response_type"] == "in_channel"
    assert "asked:" in reply.params["text"] and reply.params["blocks"]


def test_feedback_click_is_stored_and_thanked(slack: FakeSlack, driver: Driver, core: Core) -> None:
    driver.command(f"ask {QUESTION}")
    [post] = slack.wait_for(lambda: _top_level_posts(slack, CHANNEL))
    buttons = {e["action_id"]: e["value"] for e in post["blocks"][-1]["elements"]}
    assert driver.click(VOTE_DOWN, buttons[VOTE_DOWN], user="UVOTER", message=post) == 200
    assert driver.click(VOTE_UP, buttons[VOTE_UP], user="UVOTER", message=post) == 200
    thanks = slack.wait_for(
        lambda: (
            [c for c in slack.calls if c.method.startswith("response_url:") and c.ok]
            if len([c for c in slack.calls if c.method.startswith("response_url:")]) >= 2
            else None
        )
    )
    assert all(c.params["text"] == THANKS for c in thanks)
    assert all(c.params["response_type"] == "ephemeral" for c in thanks)
    [row] = core.feedback.list()
    assert (row.voter, row.vote, row.question) == ("UVOTER", 1, QUESTION)  # changed its mind
    assert row.channel == CHANNEL and any("shop/webhooks.py" in c for c in row.citations)


def test_vote_for_an_unknown_answer_is_not_stored(
    slack: FakeSlack, driver: Driver, core: Core
) -> None:
    message = slack.add_message(CHANNEL, "U1", "old answer")
    driver.click(VOTE_UP, "deadbeefdeadbeef", user="UVOTER", message=message)
    [reply] = slack.wait_for(
        lambda: [c for c in slack.calls if c.method.startswith("response_url:") and c.ok]
    )
    assert "no longer on record" in reply.params["text"]
    assert core.feedback.list() == []


def test_busy_pool_says_so_at_once(
    slack: FakeSlack, core: Core, start_app: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(core, "_queue", AnswerQueue(workers=1, size=1))
    run = start_app()
    driver = Driver(slack, run.server.url())
    gate = Gate()
    gate.install(monkeypatch, core)
    driver.command(f"ask {QUESTION}")
    assert gate.entered.wait(timeout=15)  # one running ...
    _, _, queued = driver.command(f"ask {QUESTION}")  # ... one queued, told its place
    notes = slack.wait_for(lambda: _responses(slack, queued))
    assert any("#1 in line" in n.params["text"] for n in notes)
    _, _, overflow = driver.command(f"ask {QUESTION}")
    [reply] = slack.wait_for(lambda: _responses(slack, overflow))
    assert "busy right now" in reply.params["text"]
    gate.release.set()
    run.server.stop()
    run.bot.close()  # every accepted question still gets its answer
    assert len(_top_level_posts(slack, CHANNEL)) == 2
