"""Which payloads are questions (pure rules, no app)."""

from __future__ import annotations

from typing import Any

import pytest

from adapters.slack.events import SlashCommand, parse_event
from adapters.slack.history import BotIdentity

BOT = BotIdentity("UBOT", "BBOT")


def _body(**event: Any) -> dict[str, Any]:
    base = {"channel": "C1", "user": "U1", "ts": "10.000002", "text": "<@UBOT> where?"}
    return {"team_id": "T1", "event_id": "Ev1", "event": {**base, **event}}


def test_mention_is_answered_in_a_new_thread() -> None:
    incoming = parse_event(_body(type="app_mention"), BOT)
    assert incoming is not None
    assert (incoming.kind, incoming.text, incoming.reply_ts) == ("mention", "where?", "10.000002")
    assert incoming.keys() == ("slack:T1:C1:10.000002", "slack:event:Ev1")
    assert incoming.context().guild == "T1" and not incoming.context().is_dm


def test_duplicate_message_event_of_a_mention_is_ignored() -> None:
    assert parse_event(_body(type="message", channel_type="channel"), BOT) is None
    in_thread = _body(type="message", channel_type="channel", thread_ts="10.000001")
    assert parse_event(in_thread, BOT) is None  # app_mention answers it


def test_thread_reply_without_mention_is_a_possible_follow_up() -> None:
    body = _body(type="message", channel_type="group", thread_ts="10.000001", text="and then?")
    incoming = parse_event(body, BOT)
    assert incoming is not None and incoming.kind == "followup"
    assert incoming.in_thread and incoming.reply_ts == "10.000001"


@pytest.mark.parametrize(
    "text", ["thanks!", "Thank you :pray:", "ok, got it", ":+1:", "<@UALICE> can you check this?"]
)
def test_side_talk_in_a_thread_is_not_a_follow_up(text: str) -> None:
    body = _body(type="message", channel_type="channel", thread_ts="10.000001", text=text)
    assert parse_event(body, BOT) is None


def test_direct_messages_stay_flat_unless_written_in_a_thread() -> None:
    flat = parse_event(_body(type="message", channel="D1", channel_type="im", text="q"), BOT)
    assert flat is not None and flat.kind == "dm" and flat.reply_ts is None
    assert flat.context().is_dm
    threaded = parse_event(
        _body(type="message", channel="D1", channel_type="im", thread_ts="9.1"), BOT
    )
    assert threaded is not None and threaded.reply_ts == "9.1" and threaded.text == "where?"


@pytest.mark.parametrize(
    "event",
    [
        {"type": "message", "channel_type": "im", "subtype": "message_changed"},
        {"type": "message", "channel_type": "im", "subtype": "channel_join"},
        {"type": "message", "channel_type": "im", "user": "UBOT"},
        {"type": "app_mention", "bot_id": "BOTHER", "subtype": "bot_message"},
        {"type": "message", "channel_type": "im", "bot_id": "BOTHER"},
        {"type": "reaction_added"},
    ],
)
def test_ignored(event: dict[str, Any]) -> None:
    assert parse_event(_body(**event), BOT) is None


def test_other_bots_are_answered_when_allowed() -> None:
    body = _body(type="app_mention", bot_id="BOTHER", user="", subtype="bot_message")
    incoming = parse_event(body, BOT, answer_bots=True)
    assert incoming is not None and incoming.user == "BOTHER"
    own = _body(type="app_mention", bot_id="BBOT", user="")
    assert parse_event(own, BOT, answer_bots=True) is None  # never itself


@pytest.mark.parametrize(
    ("text", "word", "question"),
    [
        ("ask  where is it?", "ask", "where is it?"),
        ("ASK why", "ask", "why"),
        ("where is it?", "where", "where is it?"),
        ("status", "status", "status"),
        ("", "", ""),
    ],
)
def test_slash_command_words(text: str, word: str, question: str) -> None:
    cmd = SlashCommand.from_payload({"text": text, "channel_id": "D1", "user_id": "U1"})
    assert (cmd.word, cmd.question, cmd.is_dm) == (word, question, True)
