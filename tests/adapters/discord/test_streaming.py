"""Streamed answers through real discord.py, the fake Discord API and the fake OpenAI stream.

What a user sees is read from the fake's timeline: every state each bot message
took, stamped when Discord applied it.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from bot.answer.streaming import CUT_OFF
from bot.core import Core
from tests.servers.discord_edits import MessageState
from tests.servers.discord_fake import APP_ID, InteractionState
from tests.servers.discord_wire import MAX_CONTENT, SUPPRESS_EMBEDS
from tests.servers.openai_fake import FakeOpenAI
from tests.support.discord_core import build_core
from tests.support.discord_gateway import OPEN_CHANNEL, bot_user, mention
from tests.support.discord_harness import Harness, run, running
from tests.support.streaming import each_char

QUESTION = "where do we retry failed webhooks?"
ANSWER = (
    "Failed webhook deliveries are retried by retry_failed_webhooks [1]. "
    "It waits 2 ** attempt seconds between attempts, so the pauses grow quickly [1]. "
    + "After the last attempt the delivery is marked dead and left for an operator [1]. "
    * 6
)
LINK = re.compile(r"\[src/hooks\.py:L\d+-L\d+\]\(<https://github\.com/acme/demo/blob/")
EDIT = r"PATCH /channels/\d+/messages/\d+"


def words(text: str) -> list[str]:
    """A stream split: one word (with its trailing space) per SSE chunk."""
    return re.findall(r"\S+\s*", text)


def fences_balanced(text: str) -> bool:
    return sum(1 for line in text.splitlines() if line.lstrip().startswith("```")) % 2 == 0


@contextmanager
def held(llm: FakeOpenAI, after_chunks: int) -> Iterator[threading.Event]:
    release = llm.hold_stream_next(after_chunks)
    timer = threading.Timer(20, release.set)  # a failing test must not hang
    timer.start()
    try:
        yield release
    finally:
        release.set()
        timer.cancel()


async def final_messages(h: Harness, channel_id: int) -> list[dict[str, Any]]:
    """The bot's messages once the last one carries the vote buttons (the final state)."""
    await h.fake.wait_for(
        lambda: (
            h.fake.bot_messages(channel_id) and h.fake.bot_messages(channel_id)[-1]["components"]
        ),
        timeout=30,
    )
    await h.settle()
    return h.fake.bot_messages(channel_id)


def ask(h: Harness, text: str = QUESTION) -> dict[str, Any]:
    return h.say(OPEN_CHANNEL, mention(text), mentions=[bot_user()])


def edits_per_message(states: list[MessageState]) -> dict[int, list[float]]:
    times: dict[int, list[float]] = {}
    for state in states:
        times.setdefault(state.message_id, []).append(state.at)
    return times


def no_rate_limit_hit(h: Harness) -> bool:
    return not h.fake.limits.exceeded and all(r.status != 429 for r in h.fake.requests)


# -- mentions ----------------------------------------------------------------------------------


def test_first_text_shows_while_the_model_is_still_writing(llm_core: Core, llm: FakeOpenAI) -> None:
    llm.chat_reply = lambda body: ANSWER
    llm.stream_split = words

    async def scenario() -> None:
        async with running(llm_core) as h:
            with held(llm, after_chunks=16) as release:
                question = ask(h)
                await h.fake.wait_for(lambda: h.fake.first_text_at(OPEN_CHANNEL))
                still_held = not release.is_set()
                (shown,) = h.fake.states(channel_id=OPEN_CHANNEL)
            assert still_held, "the first text only came after the model finished"
            assert shown.content.startswith("Failed webhook deliveries are retried")
            assert not shown.components and "-# " not in shown.content  # not final yet
            (reply,) = await final_messages(h, OPEN_CHANNEL)
            assert reply["message_reference"]["message_id"] == question["id"]
            assert reply["flags"] & SUPPRESS_EMBEDS
            assert LINK.search(reply["content"]) and "-# demo main@" in reply["content"]
            assert reply["content"].count("marked dead") == 6
            assert len(h.fake.calls("POST", rf"/channels/{OPEN_CHANNEL}/messages")) == 1

    run(scenario())


def test_edits_come_at_most_once_a_second_and_within_the_buckets(
    llm_core: Core, llm: FakeOpenAI
) -> None:
    llm.chat_reply = lambda body: ANSWER
    llm.stream_split = words
    llm.stream_interval = 0.03  # ~100 words: about three seconds of writing

    async def scenario() -> None:
        async with running(llm_core) as h:
            ask(h)
            await final_messages(h, OPEN_CHANNEL)
            states = h.fake.states(channel_id=OPEN_CHANNEL)
            assert len(states) >= 4, "the answer should have grown over several edits"
            for times in edits_per_message(states).values():
                gaps = [b - a for a, b in itertools.pairwise(times)]
                assert all(gap >= 0.99 for gap in gaps), gaps
            assert no_rate_limit_hit(h)
            shown = [s.content for s in states]
            for before, after in itertools.pairwise(shown[:-1]):
                assert after.startswith(before)  # while streaming, text only grows
            for state in states:
                assert state.flags & SUPPRESS_EMBEDS  # edits keep link previews off

    run(scenario())


def test_two_answers_in_one_channel_share_its_buckets_without_a_429(
    llm_core: Core, llm: FakeOpenAI
) -> None:
    llm.chat_reply = lambda body: ANSWER
    llm.stream_split = words
    llm.stream_interval = 0.03
    llm.gate(2)  # both questions reach the model together

    async def scenario() -> None:
        async with running(llm_core) as h:
            ask(h)
            ask(h, "and where are webhook retries scheduled?")
            await h.fake.wait_for(
                lambda: sum(bool(m["components"]) for m in h.fake.bot_messages(OPEN_CHANNEL)) == 2,
                timeout=30,
            )
            await h.settle()
            edits = h.fake.calls("PATCH", rf"/channels/{OPEN_CHANNEL}/messages/\d+")
            # More edits than one bucket window allows: discord.py held some back.
            assert len(edits) > 5
            assert no_rate_limit_hit(h)
            for reply in h.fake.bot_messages(OPEN_CHANNEL):
                assert reply["content"].count("marked dead") == 6

    run(scenario())


def long_reply(body: dict[str, Any], marker: str = " [1]") -> str:
    code = "\n".join(f"    attempt_{i} = hook.deliver(timeout={i})  # retry" for i in range(40))
    prose = f"The retry loop backs off exponentially between deliveries{marker}. "
    return f"{prose * 24}\n\n```python\ndef retry():\n{code}\n```\n\n{prose * 10}"


def test_a_long_answer_continues_in_a_new_message_with_fences_balanced(
    llm_core: Core, llm: FakeOpenAI
) -> None:
    llm.chat_reply = lambda body: long_reply(body, marker="")  # no links: final text = streamed
    llm.stream_split = lambda text: [text[i : i + 60] for i in range(0, len(text), 60)]
    llm.stream_interval = 0.02

    async def scenario() -> None:
        async with running(llm_core) as h:
            question = ask(h)
            messages = await final_messages(h, OPEN_CHANNEL)
            assert len(messages) >= 2
            for state in h.fake.states(channel_id=OPEN_CHANNEL):
                assert 0 < len(state.content) <= MAX_CONTENT
                assert fences_balanced(state.content), state.content
            assert any(m["content"].startswith("```python\n") for m in messages[1:])
            for before, later in itertools.pairwise(messages):
                # A message is posted only once the one before it shows its part in full.
                born = h.fake.states(message_id=int(later["id"]))[0].at
                *earlier, _ = h.fake.screen(OPEN_CHANNEL, at=born)
                assert earlier[-1].content == before["content"]
            joined = "\n".join(m["content"] for m in messages)
            for i in range(40):
                assert joined.count(f"attempt_{i} = hook.deliver(timeout={i})") == 1
            assert [bool(m["components"]) for m in messages] == [False] * (len(messages) - 1) + [
                True
            ]
            assert messages[0]["message_reference"]["message_id"] == question["id"]
            # Continuations reply to the answer's first message: two answers at once stay apart.
            assert all(
                m["message_reference"]["message_id"] == messages[0]["id"] for m in messages[1:]
            )
            assert no_rate_limit_hit(h)

    run(scenario())


def test_a_mention_split_across_pieces_never_shows(llm_core: Core, llm: FakeOpenAI) -> None:
    user, role = "<@123456789012345678>", "<@&223456789012345678>"  # Discord snowflakes
    llm.chat_reply = lambda body: f"Ask {user}, {role} or @everyone about retries [1]. Then @here."
    llm.stream_split = each_char

    async def scenario() -> None:
        async with running(llm_core) as h:
            ask(h)
            await final_messages(h, OPEN_CHANNEL)
            states = h.fake.states(channel_id=OPEN_CHANNEL)
            assert len(states) >= 2
            for state in states:
                assert user not in state.content and role not in state.content
                assert "<@" not in state.content
                assert not re.search(r"@(everyone|here)", state.content), state.content
            for body in h.fake.message_bodies():
                assert body["allowed_mentions"]["parse"] == []
            assert not any(m["mention_everyone"] for m in h.fake.bot_messages(OPEN_CHANNEL))

    run(scenario())


def test_a_broken_stream_keeps_its_text_and_ends_with_one_sentence(
    llm_core: Core, llm: FakeOpenAI
) -> None:
    llm.chat_reply = lambda body: ANSWER
    llm.stream_split = words
    llm.break_stream_next(after_chunks=20)

    async def scenario() -> None:
        async with running(llm_core) as h:
            ask(h)
            (reply,) = await final_messages(h, OPEN_CHANNEL)
            body = reply["content"]
            assert body.startswith("Failed webhook deliveries are retried")
            assert body.count(CUT_OFF) == 1
            footer = body.split(CUT_OFF)[1].strip().splitlines()  # then the small print:
            assert all(line.startswith("-# ") for line in footer)  # what last changed the
            assert footer[-1].startswith("-# demo main@")  # cited lines, then freshness
            assert "marked dead" not in body  # past the break: never written
            assert len(h.fake.calls("POST", rf"/channels/{OPEN_CHANNEL}/messages")) == 1

    run(scenario())


def test_a_429_on_an_edit_slows_the_answer_but_loses_nothing(
    llm_core: Core, llm: FakeOpenAI
) -> None:
    llm.chat_reply = lambda body: ANSWER
    llm.stream_split = words
    llm.stream_interval = 0.02

    async def scenario() -> None:
        async with running(llm_core) as h:
            send = r"POST /channels/\d+/messages"
            h.fake.fail_next(429, count=1, retry_after=0.2, method_or_path=send)
            h.fake.drop_next(1, send, processed=True)  # posted, but the answer is lost
            h.fake.fail_next(429, count=2, retry_after=0.3, method_or_path=EDIT)
            h.fake.drop_next(1, EDIT)  # and one edit whose connection is lost
            ask(h)
            (reply,) = await final_messages(h, OPEN_CHANNEL)  # one message: never a second
            refused = [r for r in h.fake.requests if r.status in (429, -1)]
            assert len(refused) == 5
            assert reply["content"].count("marked dead") == 6
            assert LINK.search(reply["content"]) and "-# demo main@" in reply["content"]

    run(scenario())


# -- /ask ----------------------------------------------------------------------------------------


def webhook_calls(h: Harness, state: InteractionState, method: str, tail: str = "") -> int:
    return len(h.fake.calls(method, rf"/webhooks/{APP_ID}/{state.token}{tail}"))


def test_slash_ask_streams_into_the_deferred_response(llm_core: Core, llm: FakeOpenAI) -> None:
    llm.chat_reply = lambda body: ANSWER
    llm.stream_split = words

    async def scenario() -> None:
        async with running(llm_core) as h:
            with held(llm, after_chunks=16) as release:
                state = h.slash("ask", {"question": QUESTION})
                await h.fake.wait_for(lambda: state.messages)
                still_held = not release.is_set()
                first = state.messages[0]["content"]
            assert still_held
            assert first.startswith(f"> {QUESTION}\n\nFailed webhook deliveries")
            callbacks = h.fake.calls("POST", rf"/interactions/{state.id}/{state.token}/callback")
            assert [c.body for c in callbacks] == [{"type": 5}]
            await h.fake.wait_for(lambda: state.messages[-1]["components"], timeout=30)
            await h.settle()
            (message,) = state.messages
            assert message["content"].startswith(f"> {QUESTION}")
            assert LINK.search(message["content"]) and "-# demo main@" in message["content"]
            assert webhook_calls(h, state, "PATCH", "/messages/@original") >= 1
            assert webhook_calls(h, state, "POST") == 1  # it filled the "thinking" response
            for shown in h.fake.states(message_id=int(message["id"])):
                assert shown.flags & SUPPRESS_EMBEDS
            assert no_rate_limit_hit(h)

    run(scenario())


def test_a_long_slash_answer_overflows_into_follow_ups(llm_core: Core, llm: FakeOpenAI) -> None:
    llm.chat_reply = long_reply
    llm.stream_split = lambda text: [text[i : i + 80] for i in range(0, len(text), 80)]
    llm.stream_interval = 0.04  # the overflow follow-up is posted while the text still grows

    async def scenario() -> None:
        async with running(llm_core) as h:
            state = h.slash("ask", {"question": QUESTION})
            await h.fake.wait_for(
                lambda: state.messages and state.messages[-1]["components"], timeout=30
            )
            await h.settle()
            assert len(state.messages) >= 2
            assert webhook_calls(h, state, "POST") == len(state.messages)
            assert webhook_calls(h, state, "PATCH", r"/messages/\d+")  # follow-ups by id
            for shown in h.fake.states():
                assert 0 < len(shown.content) <= MAX_CONTENT and fences_balanced(shown.content)
            assert [bool(m["components"]) for m in state.messages][-1]
            assert no_rate_limit_hit(h)

    run(scenario())


# -- streaming off: today's path ---------------------------------------------------------------


@pytest.fixture
def whole_core(
    llm: FakeOpenAI,
    repos: dict[str, Any],
    config_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Core]:
    monkeypatch.setenv("CODECITE_STREAM", "0")
    monkeypatch.setenv("CODECITE_HOME", str(tmp_path / "whole-home"))
    core = build_core(repos, config_path)
    yield core
    core.close()


def test_the_final_streamed_state_is_todays_reply(
    llm_core: Core, whole_core: Core, llm: FakeOpenAI
) -> None:
    llm.chat_reply = lambda body: ANSWER
    llm.stream_split = words
    assert llm_core.settings.stream_answers and not whole_core.settings.stream_answers

    async def replies(core: Core) -> tuple[dict[str, Any], Harness]:
        async with running(core) as h:
            ask(h)
            (reply,) = await final_messages(h, OPEN_CHANNEL)
            return reply, h

    async def scenario() -> None:
        streamed, hs = await replies(llm_core)
        whole, hw = await replies(whole_core)
        assert streamed["content"] == whole["content"]
        assert (
            buttons(streamed)
            == buttons(whole)
            == [
                ("👍", "Helpful", "codecite:vote:up"),
                ("👎", "Not helpful", "codecite:vote:down"),
            ]
        )
        assert hs.fake.calls("PATCH", r"/channels/\d+/messages/\d+")  # streamed: edited
        assert hw.fake.calls("PATCH", r"/channels/\d+/messages/\d+") == []  # whole: posted once
        assert len(hw.fake.calls("POST", rf"/channels/{OPEN_CHANNEL}/messages")) == 1

    run(scenario())


def buttons(message: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (c["emoji"]["name"], c["label"], c["custom_id"].rsplit(":", 1)[0])
        for row in message["components"]
        for c in row["components"]
    ]


def test_with_streaming_off_slash_ask_answers_in_one_follow_up(
    whole_core: Core, llm: FakeOpenAI
) -> None:
    llm.chat_reply = lambda body: ANSWER

    async def scenario() -> None:
        async with running(whole_core) as h:
            state = h.slash("ask", {"question": QUESTION})
            await h.fake.wait_for(lambda: state.messages)
            await h.settle()
            (message,) = state.messages
            assert LINK.search(message["content"]) and message["components"]
            assert webhook_calls(h, state, "POST") == 1
            assert webhook_calls(h, state, "PATCH", "/messages/@original") == 0

    run(scenario())


def test_without_a_model_the_whole_answer_is_posted_once(core: Core) -> None:
    assert core.settings.stream_answers

    async def scenario() -> None:
        async with running(core) as h:
            ask(h)
            (reply,) = await final_messages(h, OPEN_CHANNEL)
            assert LINK.search(reply["content"])
            assert h.fake.calls("PATCH", r"/channels/\d+/messages/\d+") == []
            assert len(h.fake.states(channel_id=OPEN_CHANNEL)) == 1  # one state: final at once

    run(scenario())
