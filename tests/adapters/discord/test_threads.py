"""Answers in a new thread, and follow-ups that continue with the thread's history."""

from __future__ import annotations

from typing import Any

from adapters.discord.render import strip_footer
from bot.core import Context, Core
from bot.models import Turn
from tests.servers.openai_fake import FakeOpenAI
from tests.support.discord_gateway import ALICE, OPEN_CHANNEL, THREAD_CHANNEL, bot_user, mention
from tests.support.discord_harness import Harness, run, running, served

Asked = list[tuple[str, Context, tuple[Turn, ...]]]


def record_asks(core: Core) -> Asked:
    """Pass every question through to the real core (whole or streamed), remembering what
    the adapter handed it."""
    asked: Asked = []
    real, real_stream = core.ask, core.ask_stream

    def ask(text: str, ctx: Context, conversation: Any = (), **kwargs: Any) -> Any:
        asked.append((text, ctx, tuple(conversation)))
        return real(text, ctx, conversation, **kwargs)

    def ask_stream(text: str, ctx: Context, conversation: Any = (), **kwargs: Any) -> Any:
        asked.append((text, ctx, tuple(conversation)))
        return real_stream(text, ctx, conversation, **kwargs)

    core.ask = ask  # type: ignore[method-assign]
    core.ask_stream = ask_stream  # type: ignore[method-assign]
    return asked


async def replies(h: Harness, channel_id: int, count: int) -> list[dict[str, Any]]:
    await h.fake.wait_for(lambda: len(h.fake.bot_messages(channel_id)) >= count)
    await h.settle()
    return h.fake.bot_messages(channel_id)


def history_reads(h: Harness, channel_id: int) -> int:
    return len(h.fake.calls("GET", rf"/channels/{channel_id}/messages"))


def test_thread_reply_continues_with_the_thread_history(llm_core: Core, llm: FakeOpenAI) -> None:
    asked = record_asks(llm_core)
    answers = iter(
        ["Retries live in retry_failed_webhooks [1].", "It waits 2 ** attempt seconds [1]."]
    )
    llm.chat_reply = lambda body: next(answers)

    async def scenario() -> None:
        async with running(llm_core, message_content=True) as h:
            question = h.say(
                THREAD_CHANNEL, mention("where do we retry failed webhooks?"), mentions=[bot_user()]
            )
            thread_id = int(question["id"])  # a thread started from a message shares its id
            (first,) = await replies(h, thread_id, 1)
            (opened,) = h.fake.calls(
                "POST", rf"/channels/{THREAD_CHANNEL}/messages/{thread_id}/threads"
            )
            assert opened.body["name"] == "where do we retry failed webhooks?"
            assert h.fake.calls("POST", rf"/channels/{THREAD_CHANNEL}/messages") == []
            assert "message_reference" not in first

            h.thread_created(thread_id)
            h.say(thread_id, "and how long does it wait between attempts?")  # no mention needed
            first, second = await replies(h, thread_id, 2)
            assert second["content"].startswith("It waits 2 ** attempt seconds ([src/hooks.py:L")

            text, ctx, conversation = asked[-1]
            assert text == "and how long does it wait between attempts?"
            assert ctx.channel == str(THREAD_CHANNEL)  # the thread keeps its channel's scope
            assert conversation == (
                Turn("user", "where do we retry failed webhooks?"),
                Turn("assistant", strip_footer(first["content"])),
            )
            messages = llm.bodies("/chat/completions")[-1]["messages"]
            assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
            assert messages[1]["content"] == "where do we retry failed webhooks?"

    run(scenario())


def test_without_message_content_a_thread_follow_up_needs_a_mention(core: Core) -> None:
    async def scenario() -> None:
        async with running(core) as h:
            question = h.say(
                THREAD_CHANNEL, mention("where do we retry failed webhooks?"), mentions=[bot_user()]
            )
            thread_id = int(question["id"])
            await replies(h, thread_id, 1)
            h.thread_created(thread_id)
            h.say(thread_id, "")  # Discord hides the text of unmentioned messages
            await h.settle()
            assert history_reads(h, thread_id) == 0
            h.say(thread_id, mention("and the backoff?"), mentions=[bot_user()])
            _, second = await replies(h, thread_id, 2)
            assert history_reads(h, thread_id) == 1
            assert "message_reference" not in second  # a follow-up, not a fresh question

    run(scenario())


def test_threads_without_the_bot_are_left_alone_until_it_is_mentioned(core: Core) -> None:
    asked = record_asks(core)

    async def scenario() -> None:
        async with running(core, message_content=True) as h:
            thread_id = h.user_thread(OPEN_CHANNEL, ALICE)
            h.say(thread_id, "where do we retry failed webhooks?")
            await h.settle()
            assert history_reads(h, thread_id) == 1 and asked == []
            ping = h.say(
                thread_id, mention("where do we retry failed webhooks?"), mentions=[bot_user()]
            )
            (reply,) = await replies(h, thread_id, 1)
            assert reply["message_reference"]["message_id"] == ping["id"]
            _, ctx, conversation = asked[-1]
            assert ctx.channel == str(OPEN_CHANNEL) and conversation == ()

    run(scenario())


def test_after_a_restart_the_thread_starter_is_fetched_for_the_conversation(core: Core) -> None:
    asked = record_asks(core)

    async def scenario() -> None:
        async with served() as fake:
            async with running(core, fake=fake) as h:
                question = h.say(
                    THREAD_CHANNEL,
                    mention("where do we retry failed webhooks?"),
                    mentions=[bot_user()],
                )
                thread_id = int(question["id"])
                (first,) = await replies(h, thread_id, 1)
            async with running(core, fake=fake) as h:  # a new client: empty message cache
                h.thread_created(thread_id)
                h.say(thread_id, mention("and the backoff?"), mentions=[bot_user()])
                await replies(h, thread_id, 2)
                starter = rf"/channels/{THREAD_CHANNEL}/messages/{thread_id}"
                assert len(h.fake.calls("GET", starter)) == 1
        text, _, conversation = asked[-1]
        assert text == "and the backoff?"
        assert conversation == (
            Turn("user", "where do we retry failed webhooks?"),
            Turn("assistant", strip_footer(first["content"])),
        )

    run(scenario())
