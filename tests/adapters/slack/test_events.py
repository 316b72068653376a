"""Which payloads are questions (pure rules, no app)."""

from __future__ import annotations

from typing import Any

import pytest

from adapters.slack.conversations import UNKNOWN, Conversation, classify
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
    ctx = incoming.context(Conversation("public"))
    assert ctx.guild == "T1" and not ctx.is_dm and ctx.audience == "internal"


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
    assert flat.context(Conversation("im")).is_dm
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
        # The App Home of retired workspace apps (message.app_home): not a conversation we know.
        {"type": "message", "channel_type": "app_home", "channel": "D1"},
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
    ("text", "name", "question"),
    [
        ("ask  where is it?", "ask", "where is it?"),
        ("ASK why", "ask", "why"),
        ("where is it?", "ask", "where is it?"),  # a bare question
        ("status", "status", "status"),
        ("", "help", ""),  # a bare /codecite
    ],
)
def test_slash_command_words(text: str, name: str, question: str) -> None:
    cmd = SlashCommand.from_payload({"text": text, "channel_id": "D1", "user_id": "U1"})
    assert (cmd.command.name, cmd.question, cmd.channel) == (name, question, "D1")


def test_the_envelope_saying_a_channel_is_shared_beats_the_lookup() -> None:
    body = {**_body(type="app_mention"), "is_ext_shared_channel": True}
    incoming = parse_event(body, BOT)
    assert incoming is not None and incoming.shared_channel
    assert incoming.context(Conversation("public")).audience == "external"
    plain = parse_event(_body(type="app_mention"), BOT)
    assert plain is not None and plain.context(Conversation("public")).audience == "internal"


@pytest.mark.parametrize(
    ("obj", "kind", "is_dm", "audience"),
    [
        # Shapes from Slack's conversation object reference (conversations.info).
        ({"id": "C1", "is_channel": True, "is_private": False}, "public", False, "internal"),
        ({"id": "G1", "is_group": True, "is_private": True}, "private", False, "internal"),
        ({"id": "C2", "is_channel": True, "is_private": True}, "private", False, "internal"),
        ({"id": "D1", "is_im": True, "user": "U1"}, "im", True, "internal"),
        (
            {"id": "G2", "is_mpim": True, "is_group": False, "is_private": True},
            "mpim",
            True,
            "internal",
        ),
        ({"id": "G3", "is_mpim": True, "is_group": True}, "mpim", True, "internal"),  # legacy
        ({"id": "C3", "is_channel": True, "is_ext_shared": True}, "public", False, "external"),
        (
            {"id": "C4", "is_channel": True, "is_pending_ext_shared": True},
            "public",
            False,
            "external",
        ),
        (
            {"id": "C5", "is_channel": True, "is_shared": True, "is_org_shared": True},
            "public",
            False,
            "internal",
        ),
        ({"id": "X1"}, None, True, "unknown"),  # a shape we do not know: fail closed
    ],
)
def test_conversation_kinds(
    obj: dict[str, Any], kind: str | None, is_dm: bool, audience: str
) -> None:
    conversation = classify(obj)
    assert (conversation.kind, conversation.is_dm, conversation.audience) == (kind, is_dm, audience)


def test_an_unknown_conversation_is_dm_like_and_unverified() -> None:
    assert UNKNOWN.is_dm and UNKNOWN.audience == "unknown"
