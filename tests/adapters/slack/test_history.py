from __future__ import annotations

from typing import Any

from slack_sdk import WebClient

from adapters.slack import history
from adapters.slack.history import BotIdentity, history_from, load_thread, ts_key
from bot.models import Turn
from tests.servers.slack_fake import BOT_ID, BOT_TOKEN, BOT_USER_ID, FakeSlack

BOT = BotIdentity(BOT_USER_ID, BOT_ID)


def _msg(ts: str, text: str, user: str = "U1", **extra: Any) -> dict[str, Any]:
    return {"type": "message", "ts": ts, "user": user, "text": text, **extra}


def test_roles_mentions_links_and_the_current_message() -> None:
    messages = [
        _msg("100.000001", f"<@{BOT_USER_ID}> where do we retry?"),
        _msg("100.000002", "In <https://h.test/a#L1|shop/a.py:L1-L9> &amp; more", BOT_USER_ID),
        _msg("100.000003", "part two", user="", bot_id=BOT_ID),  # a split answer, bot_id only
        _msg("100.000004", "joined", subtype="channel_join"),
        _msg("100.000005", "and who calls it?"),  # the question being answered now
    ]
    thread = history_from(messages, before_ts="100.000005", bot=BOT)
    assert thread.bot_answered
    assert thread.turns == (
        Turn("user", "where do we retry?"),
        Turn("assistant", "In shop/a.py:L1-L9 & more\n\npart two"),
    )


def test_thread_without_the_bot() -> None:
    thread = history_from([_msg("1.1", "hi"), _msg("1.2", "yo", "U2")], before_ts="1.3", bot=BOT)
    assert not thread.bot_answered
    assert thread.turns == (Turn("user", "hi\n\nyo"),)


def test_history_keeps_the_newest_turns_within_the_caps(monkeypatch: Any) -> None:
    monkeypatch.setattr(history, "HISTORY_MESSAGES", 4)
    monkeypatch.setattr(history, "HISTORY_CHARS", 50)
    messages = [
        _msg(f"5.{i:06d}", f"message {i} " + "x" * 10, BOT_USER_ID if i % 2 else "U1")
        for i in range(10)
    ]
    turns = history_from(messages, before_ts="6.0", bot=BOT).turns
    assert sum(len(t.text) for t in turns) <= 50
    assert turns[-1] == Turn("assistant", "message 9 " + "x" * 10)
    assert len(turns) <= 4


def test_timestamps_compare_exactly() -> None:
    assert ts_key("1700000000.000100") < ts_key("1700000000.000101")
    assert ts_key("1700000001.000000") > ts_key("1700000000.999999")


def test_load_thread_pages_through_replies(monkeypatch: Any) -> None:
    monkeypatch.setattr(history, "PAGE_SIZE", 2)
    with FakeSlack() as slack:
        parent = slack.add_message("C1", "U1", f"<@{BOT_USER_ID}> q1")
        for i in range(4):
            slack.add_message("C1", "U1", f"reply {i}", thread_ts=parent["ts"])
        last = slack.add_message("C1", "U1", "now", thread_ts=parent["ts"])
        client = WebClient(token=BOT_TOKEN, base_url=slack.base_url)
        thread = load_thread(client, "C1", parent["ts"], before_ts=last["ts"], bot=BOT)
        assert len(slack.calls_to("conversations.replies")) == 3
    assert thread.turns == (Turn("user", "q1\n\nreply 0\n\nreply 1\n\nreply 2\n\nreply 3"),)


def test_load_thread_refused_means_no_history() -> None:
    with FakeSlack() as slack:
        client = WebClient(token=BOT_TOKEN, base_url=slack.base_url)
        thread = load_thread(client, "C1", "1.000001", before_ts="2.0", bot=BOT)
    assert thread == history.NO_HISTORY
