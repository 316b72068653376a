"""Mentions, DMs, channel scope and mention safety through real discord.py and the fake API."""

from __future__ import annotations

import re
from typing import Any

from bot.core import Core
from tests.servers.discord_fake import BOT_ID
from tests.servers.discord_wire import MAX_CONTENT, SUPPRESS_EMBEDS
from tests.servers.openai_fake import FakeOpenAI
from tests.support.discord_gateway import (
    ALICE,
    BOB,
    MAPPED_CHANNEL,
    OPEN_CHANNEL,
    bot_user,
    mention,
)
from tests.support.discord_harness import Harness, run, running

LINK = re.compile(r"\[src/hooks\.py:L\d+-L\d+\]\(<https://github\.com/acme/demo/blob/[0-9a-f]{40}/")


def paths(h: Harness) -> list[str]:
    return [f"{r.method} {r.path}" for r in h.fake.requests if 200 <= r.status < 300]


async def replies(h: Harness, channel_id: int, count: int = 1) -> list[dict[str, Any]]:
    await h.fake.wait_for(lambda: len(h.fake.bot_messages(channel_id)) >= count)
    await h.settle()
    return h.fake.bot_messages(channel_id)


def fences_balanced(text: str) -> bool:
    return sum(1 for line in text.splitlines() if line.lstrip().startswith("```")) % 2 == 0


def test_mention_is_acknowledged_at_once_then_answered_as_a_reply(core: Core) -> None:
    async def scenario() -> None:
        async with running(core) as h:
            question = h.say(
                OPEN_CHANNEL, mention("where do we retry failed webhooks?"), mentions=[bot_user()]
            )
            (reply,) = await replies(h, OPEN_CHANNEL)
            calls = paths(h)
            react = f"PUT /channels/{OPEN_CHANNEL}/messages/{question['id']}/reactions/👀/@me"
            typing, send = (
                f"POST /channels/{OPEN_CHANNEL}/typing",
                f"POST /channels/{OPEN_CHANNEL}/messages",
            )
            assert calls.index(react) < calls.index(typing) < calls.index(send)
            body = h.fake.calls("POST", rf"/channels/{OPEN_CHANNEL}/messages")[0].body
            assert body["allowed_mentions"] == {"parse": [], "replied_user": False}
            assert body["flags"] & SUPPRESS_EMBEDS
            assert str(body["message_reference"]["message_id"]) == question["id"]
            assert LINK.search(reply["content"])
            assert reply["components"]  # the vote buttons

    run(scenario())


def test_direct_message_is_answered_without_a_mention(core: Core) -> None:
    async def scenario() -> None:
        async with running(core) as h:
            dm = h.open_dm(ALICE)
            h.say(dm, "where do we retry failed webhooks?", guild_id=None)
            (reply,) = await replies(h, dm)
            assert LINK.search(reply["content"])

    run(scenario())


def test_messages_not_addressed_to_the_bot_are_ignored(core: Core) -> None:
    async def scenario() -> None:
        async with running(core) as h:
            h.say(OPEN_CHANNEL, "")  # no Message Content intent: Discord blanks other messages
            h.say(OPEN_CHANNEL, "@everyone where do we retry failed webhooks?")
            other_bot = {**BOB, "bot": True}
            h.say(OPEN_CHANNEL, mention("retry?"), author=other_bot, mentions=[bot_user()])
            h.say(OPEN_CHANNEL, mention("where do we retry?"), author=bot_user(), mentions=[])
            await h.settle()
            assert not [p for p in paths(h) if p.startswith(("POST /channels", "PUT /channels"))]
            h.say(
                OPEN_CHANNEL, mention("where do we retry failed webhooks?"), mentions=[bot_user()]
            )
            await h.fake.wait_for(
                lambda: h.fake.calls("POST", rf"/channels/{OPEN_CHANNEL}/messages")
            )
            await h.settle()
            assert len(h.fake.calls("POST", rf"/channels/{OPEN_CHANNEL}/messages")) == 1

    run(scenario())


def test_out_of_scope_repository_is_never_retrieved(llm_core: Core, llm: FakeOpenAI) -> None:
    question = mention("do we reconcile_ledger_batch before we retry failed webhooks?")

    def prompt() -> str:
        return str(llm.bodies("/chat/completions")[-1]["messages"][-1]["content"])

    async def scenario() -> None:
        async with running(llm_core) as h:
            h.say(MAPPED_CHANNEL, question, mentions=[bot_user()])
            (mapped,) = await replies(h, MAPPED_CHANNEL)
            # Everything the model saw came from the channel's one repository.
            assert "retry_failed_webhooks" in prompt()
            assert "reconcile_ledger_batch(batch)" not in prompt() and "billing" not in prompt()
            assert "billing" not in mapped["content"] and "ledger.py" not in mapped["content"]
            h.say(OPEN_CHANNEL, question, mentions=[bot_user()])
            (open_,) = await replies(h, OPEN_CHANNEL)
            # The same question where every repository is in scope does reach it.
            assert "reconcile_ledger_batch(batch)" in prompt()
            assert "billing/ledger.py" in open_["content"]

    run(scenario())


def long_reply(body: dict[str, Any]) -> str:
    code = "\n".join(f"    attempt_{i} = hook.deliver(timeout={i})" for i in range(45))
    block = f"```python\ndef retry():\n{code}\n```"
    prose = "The retry loop backs off exponentially between deliveries [1]. " * 6
    return "\n\n".join(
        [prose + " Tell @everyone and @here about it.", block, prose, block, prose, block, prose]
    )


def test_long_answer_is_split_into_valid_messages_and_cannot_ping(
    llm_core: Core, llm: FakeOpenAI
) -> None:
    llm.chat_reply = long_reply

    async def scenario() -> None:
        async with running(llm_core) as h:
            question = h.say(
                OPEN_CHANNEL,
                mention("@here where do we retry failed webhooks?"),
                mentions=[bot_user()],
            )
            await h.fake.wait_for(
                lambda: (
                    h.fake.bot_messages(OPEN_CHANNEL)
                    and h.fake.bot_messages(OPEN_CHANNEL)[-1]["components"]
                )
            )
            await h.settle()
            pieces = h.fake.bot_messages(OPEN_CHANNEL)
            assert len(pieces) >= 3
            assert sum(len(p["content"]) for p in pieces) > 5000
            for piece in pieces:
                assert 0 < len(piece["content"]) <= MAX_CONTENT
                assert fences_balanced(piece["content"])
                assert not piece["mention_everyone"]
                assert not re.search(r"@(everyone|here)", piece["content"])
            assert [bool(p["components"]) for p in pieces] == [False] * (len(pieces) - 1) + [True]
            assert pieces[0]["message_reference"]["message_id"] == question["id"]
            # Continuations reply to the answer's first message: two answers at once stay apart.
            assert all(m["message_reference"]["message_id"] == pieces[0]["id"] for m in pieces[1:])
            joined = "\n".join(p["content"] for p in pieces)
            assert joined.count("attempt_44 = hook.deliver(timeout=44)") == 3
            assert LINK.search(joined)

    run(scenario())


def test_no_reply_of_any_kind_allows_mass_mentions(llm_core: Core, llm: FakeOpenAI) -> None:
    llm.chat_reply = lambda body: "Ask @everyone, or @here, about retries [1]."

    async def scenario() -> None:
        async with running(llm_core) as h:
            h.say(OPEN_CHANNEL, mention("@everyone where do we retry?"), mentions=[bot_user()])
            await replies(h, OPEN_CHANNEL)
            state = h.slash("ask", {"question": "@everyone where do we retry?"})
            await h.fake.wait_for(lambda: state.messages)
            h.slash("ask", {"question": ""})  # an error reply
            h.slash("help")
            await h.settle()
            dm = h.open_dm(ALICE)
            h.say(dm, "@here retry?", guild_id=None)
            await replies(h, dm)
            bodies = h.fake.message_bodies()
            assert len(bodies) >= 5
            for body in bodies:
                assert body["allowed_mentions"]["parse"] == []
                assert not re.search(r"@(everyone|here)", body.get("content", ""))
            sent = [
                m for ms in h.fake.messages.values() for m in ms if m["author"]["id"] == str(BOT_ID)
            ]
            assert sent and not any(m["mention_everyone"] for m in sent)

    run(scenario())


def test_busy_bot_says_where_a_question_stands_and_refuses_beyond_the_line(
    core: Core, monkeypatch: Any
) -> None:
    import threading

    from bot.runtime.queue import AnswerQueue

    monkeypatch.setattr(core, "_queue", AnswerQueue(workers=1, size=1))
    release = threading.Event()
    started = threading.Event()
    ask = core.run_command

    def slow(line: Any, ctx: Any, *args: Any) -> Any:
        started.set()
        release.wait(timeout=30)
        return ask(line, ctx, *args)

    monkeypatch.setattr(core, "run_command", slow)
    stream = core.ask_stream

    def slow_stream(text: str, ctx: Any, *args: Any, **kwargs: Any) -> Any:
        started.set()
        release.wait(timeout=30)
        return stream(text, ctx, *args, **kwargs)

    monkeypatch.setattr(core, "ask_stream", slow_stream)  # a bare question streams

    async def scenario() -> None:
        async with running(core) as h:
            h.say(
                OPEN_CHANNEL, mention("where do we retry failed webhooks?"), mentions=[bot_user()]
            )
            await h.fake.wait_for(started.is_set)
            h.say(OPEN_CHANNEL, mention("and the backoff?"), mentions=[bot_user()])
            await h.fake.wait_for(
                lambda: any("#1 in line" in m["content"] for m in h.fake.bot_messages(OPEN_CHANNEL))
            )
            h.say(OPEN_CHANNEL, mention("and the limits?"), mentions=[bot_user()])
            await h.fake.wait_for(
                lambda: any(
                    "busy right now" in m["content"] for m in h.fake.bot_messages(OPEN_CHANNEL)
                )
            )
            release.set()
            answers = await replies(h, OPEN_CHANNEL, count=4)  # note, refusal, two answers
            assert sum(1 for m in answers if LINK.search(m["content"])) == 2

    run(scenario())
