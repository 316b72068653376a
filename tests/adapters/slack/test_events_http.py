"""Mentions, DMs, threads and duplicates through the real Bolt app over signed HTTP."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from bot.core import Core
from bot.models import Answer, Turn
from tests.servers.slack_fake import BOT_ID, BOT_USER_ID, FakeSlack
from tests.support.slack_driver import (
    CHANNEL,
    Driver,
    Recorded,
    Running,
    patch_answers,
    replies_in,
    sign,
)

QUESTION = "where do we retry failed webhooks?"


def _drain(*runs: Running) -> None:
    """Stop taking requests and finish every accepted job: afterwards nothing else is posted."""
    for run in runs:
        run.server.stop()
        run.bot.close()


def _reply(slack: FakeSlack, channel: str, thread_ts: str, n: int = 1) -> list[dict[str, Any]]:
    return slack.wait_for(
        lambda: (r := replies_in(slack, channel, thread_ts)) and len(r) >= n and r
    )


def test_bad_signature_is_refused(slack: FakeSlack, driver: Driver) -> None:
    body = json.dumps({"type": "event_callback", "event": {"type": "app_mention"}})
    assert driver.post(body, "application/json", signature="v0=" + "0" * 64)[0] == 401
    assert driver.post(body, "application/json", signature=sign(body, 1, "wrong"))[0] == 401
    assert not slack.calls_to("chat.postMessage")


def test_stale_timestamp_is_refused(driver: Driver) -> None:
    body = json.dumps({"type": "event_callback", "event": {"type": "app_mention"}})
    stale = int(time.time()) - 6 * 60
    assert driver.post(body, "application/json", timestamp=stale)[0] == 401


def test_url_verification_and_health(driver: Driver, running: Running) -> None:
    body = json.dumps({"type": "url_verification", "challenge": "abc123", "token": "t"})
    status, text = driver.post(body, "application/json")
    assert status == 200 and "abc123" in text
    import urllib.request

    with urllib.request.urlopen(running.server.url("/healthz"), timeout=5) as resp:
        assert resp.status == 200


def test_mention_gets_eyes_then_a_cited_answer_in_its_thread(
    slack: FakeSlack, driver: Driver, recorded: Recorded
) -> None:
    msg = driver.say(QUESTION)
    [reply] = _reply(slack, CHANNEL, msg["ts"])
    methods = [c.method for c in slack.calls if c.ok]
    assert methods.index("reactions.add") < methods.index("chat.postMessage")
    added = slack.calls_to("reactions.add")[0].params
    assert (added["timestamp"], added["name"]) == (msg["ts"], "eyes")
    # Local repositories have no web URL: the label is shown in backticks.
    assert "`shop/webhooks.py:L" in reply["text"]
    assert "shop main@" in reply["text"]  # the freshness footer
    assert reply["blocks"][-1]["type"] == "actions"
    assert recorded.asks[0][0] == QUESTION  # the mention is stripped
    assert recorded.asks[0][1].channel == CHANNEL and recorded.asks[0][1].platform == "slack"
    slack.wait_for(lambda: slack.calls_to("reactions.remove"))  # 👀 goes once answered


def test_citations_link_to_permalinks_for_hosted_repositories(
    slack: FakeSlack, driver: Driver, core: Core, monkeypatch: pytest.MonkeyPatch
) -> None:
    def hosted(answer: Answer) -> Answer:
        cites = tuple(
            c.__class__(c.repo, c.path, c.start_line, c.end_line, f"https://h.test/{c.path}")
            for c in answer.citations
        )
        return Answer(
            answer.text, cites, answer.freshness, mode=answer.mode, answer_id=answer.answer_id
        )

    patch_answers(monkeypatch, core, hosted)
    msg = driver.say(QUESTION)
    [reply] = _reply(slack, CHANNEL, msg["ts"])
    assert (
        "<https://h.test/shop/webhooks.py|shop/webhooks.py:L" in reply["blocks"][0]["text"]["text"]
    )


def test_retries_and_the_duplicate_message_event_get_one_answer(
    slack: FakeSlack, driver: Driver, running: Running
) -> None:
    msg = driver.say(QUESTION)  # app_mention + message for the same mention
    event = {"type": "app_mention", "user": "UASKER", "text": msg["text"], "ts": msg["ts"]}
    event["channel"] = CHANNEL
    assert driver.event(event, event_id="EvRETRY", retry=1)[0] == 200
    assert driver.event(event, event_id="EvRETRY", retry=2)[0] == 200
    _reply(slack, CHANNEL, msg["ts"])
    _drain(running)
    assert len(replies_in(slack, CHANNEL, msg["ts"])) == 1
    assert len(slack.calls_to("reactions.add")) == 1


def test_two_processes_sharing_a_home_answer_once(
    slack: FakeSlack, driver: Driver, running: Running, start_app: Any
) -> None:
    other = start_app()
    second = Driver(slack, other.server.url())
    msg = slack.add_message(CHANNEL, "UASKER", f"<@{BOT_USER_ID}> {QUESTION}")
    event = {"type": "app_mention", "user": "UASKER", "text": msg["text"], "ts": msg["ts"]}
    event["channel"] = CHANNEL
    threads = [
        threading.Thread(target=d.event, args=(event,), kwargs={"event_id": "EvSAME"})
        for d in (driver, second, driver, second)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=15)
    _reply(slack, CHANNEL, msg["ts"])
    _drain(running, other)
    assert len(replies_in(slack, CHANNEL, msg["ts"])) == 1


def test_follow_up_in_the_thread_is_answered_with_the_thread_as_history(
    slack: FakeSlack, driver: Driver, recorded: Recorded
) -> None:
    msg = driver.say(QUESTION)
    [first] = _reply(slack, CHANNEL, msg["ts"])
    driver.say("and how many attempts are made?", thread_ts=msg["ts"], mention=False)
    _reply(slack, CHANNEL, msg["ts"], n=2)
    text, _, conversation = recorded.asks[1]
    assert text == "and how many attempts are made?"
    assert [t.role for t in conversation] == ["user", "assistant"]
    assert conversation[0] == Turn("user", QUESTION)
    assert "shop/webhooks.py:L" in conversation[1].text
    assert conversation[1].text.startswith(first["text"][:30])  # the bot's own answer
    assert slack.calls_to("conversations.replies")


def test_thread_without_the_bot_is_left_alone(
    slack: FakeSlack, driver: Driver, running: Running
) -> None:
    parent = slack.add_message(CHANNEL, "U1", "lunch?")
    driver.say("where do we retry failed webhooks?", thread_ts=parent["ts"], mention=False)
    slack.wait_for(lambda: slack.calls_to("conversations.replies"))
    _drain(running)
    assert not slack.calls_to("chat.postMessage") and not slack.calls_to("reactions.add")


def test_threads_switched_off_for_a_channel(
    slack: FakeSlack, driver: Driver, running: Running
) -> None:
    msg = driver.say(QUESTION, channel="C0NOTHREADS")
    _reply(slack, "C0NOTHREADS", msg["ts"])
    driver.say("and then?", channel="C0NOTHREADS", thread_ts=msg["ts"], mention=False)
    _drain(running)
    assert len(replies_in(slack, "C0NOTHREADS", msg["ts"])) == 1
    assert not slack.calls_to("conversations.replies")


def test_mention_inside_a_thread_uses_the_thread_and_answers_there(
    slack: FakeSlack, driver: Driver, recorded: Recorded
) -> None:
    parent = slack.add_message(CHANNEL, "U1", "webhooks keep failing in prod")
    driver.say(QUESTION, thread_ts=parent["ts"])
    _reply(slack, CHANNEL, parent["ts"])
    assert recorded.asks[0][2] == (Turn("user", "webhooks keep failing in prod"),)


def test_direct_message_is_answered_in_the_dm(
    slack: FakeSlack, driver: Driver, recorded: Recorded
) -> None:
    driver.say(QUESTION, channel="D0DM", channel_type="im", mention=False)
    [post] = slack.wait_for(lambda: slack.bot_posts("D0DM"))
    assert "thread_ts" not in post  # DMs stay flat
    assert recorded.asks[0][1].is_dm


def test_own_and_other_bots_messages_are_ignored(
    slack: FakeSlack, driver: Driver, running: Running
) -> None:
    msg = driver.say(QUESTION)
    _reply(slack, CHANNEL, msg["ts"])
    own = {"type": "message", "channel_type": "channel", "user": BOT_USER_ID, "bot_id": BOT_ID}
    own.update(text="echo", ts=slack.next_ts(), channel=CHANNEL, thread_ts=msg["ts"])
    driver.event(own)
    other = slack.add_message(CHANNEL, "", f"<@{BOT_USER_ID}> {QUESTION}", bot_id="B0OTHER")
    bot_event = {"type": "app_mention", "bot_id": "B0OTHER", "text": other["text"]}
    bot_event.update(ts=other["ts"], channel=CHANNEL, subtype="bot_message")
    driver.event(bot_event)
    _drain(running)
    assert len(slack.calls_to("chat.postMessage")) == 1


def test_a_top_level_channel_message_without_mention_is_ignored(
    slack: FakeSlack, driver: Driver, running: Running
) -> None:
    driver.say(QUESTION, mention=False)
    _drain(running)
    assert not slack.calls_to("chat.postMessage") and not slack.calls_to("conversations.replies")


def test_long_answer_is_split_into_valid_messages_in_the_thread(
    slack: FakeSlack, driver: Driver, core: Core, monkeypatch: pytest.MonkeyPatch
) -> None:
    def long_answer(answer: Answer) -> Answer:
        label = answer.citations[0].label
        code = "```python\n" + "\n".join(f"x_{i} = retry({i})" for i in range(900)) + "\n```"
        text = "\n\n".join([f"See {label}. " * 40] * 30 + [code])
        return Answer(
            text, answer.citations, answer.freshness, mode="llm", answer_id=answer.answer_id
        )

    patch_answers(monkeypatch, core, long_answer)
    msg = driver.say(QUESTION)
    replies = slack.wait_for(
        lambda: (
            (r := replies_in(slack, CHANNEL, msg["ts"]))
            and r[-1]["blocks"][-1]["type"] == "actions"
            and r
        )
    )
    assert len(replies) >= 3
    assert not [c for c in slack.calls if not c.ok]  # the strict fake refused nothing
    assert all(b["type"] != "actions" for r in replies[:-1] for b in r["blocks"])


def test_blocks_refused_falls_back_to_plain_text(slack: FakeSlack, driver: Driver) -> None:
    slack.reject_blocks = True
    msg = driver.say(QUESTION)
    [reply] = _reply(slack, CHANNEL, msg["ts"])
    assert reply["blocks"] is None
    assert "shop/webhooks.py:L" in reply["text"] and "shop main@" in reply["text"]
    refused = [c for c in slack.calls if c.method == "chat.postMessage" and not c.ok]
    assert [c.error for c in refused] == ["invalid_blocks"]


def test_unexpected_failure_shows_a_sentence_and_an_incident_id(
    slack: FakeSlack, driver: Driver, core: Core, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(answer: Answer) -> Answer:
        raise RuntimeError("database password is hunter2")

    patch_answers(monkeypatch, core, broken)
    msg = driver.say(QUESTION)
    [reply] = _reply(slack, CHANNEL, msg["ts"])
    assert "Something went wrong" in reply["text"] and "incident" in reply["text"]
    assert "hunter2" not in reply["text"] and "Traceback" not in reply["text"]


def test_channel_scope_keeps_other_repositories_out(
    slack: FakeSlack, driver: Driver, recorded: Recorded
) -> None:
    question = "how is the volume discount computed in compute_volume_discount?"
    open_msg = driver.say(question)  # unscoped channel: billing answers it
    [open_reply] = _reply(slack, CHANNEL, open_msg["ts"])
    assert "billing/discounts.py" in open_reply["text"]
    scoped = driver.say(question, channel="C0SHOP")
    [reply] = _reply(slack, "C0SHOP", scoped["ts"])
    assert "billing/discounts.py" not in reply["text"]
    assert all(c.repo == "shop" for c in recorded.answers[1].citations)
    assert {f.repo for f in recorded.answers[1].freshness} <= {"shop"}
