"""History questions through real discord.py against the fake Discord: a mention, a DM, a
mention answered in a new thread and the /ask command each cite the commits the shared core
cites, in its order, with date, author, subject and masked links (`[label](<url>)`) to
commits and PRs."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from bot.core import Core
from bot.models import Answer
from tests.servers.openai_fake import FakeOpenAI
from tests.support.discord_gateway import ALICE, OPEN_CHANNEL, THREAD_CHANNEL, bot_user, mention
from tests.support.discord_harness import Harness, run, running
from tests.support.history_everywhere import (
    DISCORD,
    QUESTIONS,
    WHO,
    WHY,
    History,
    check_body,
    check_rendered,
    cite_two_commits_and_the_code,
    discord_sources,
    indexed_history,
    reference,
)

Messages = Callable[[], list[dict[str, Any]]]


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[History, dict[str, Answer]]:
    built = indexed_history(tmp_path_factory.mktemp("history-discord"))
    copy = built.home.parent / "reference-home"
    shutil.copytree(built.home, copy)
    return built, reference(copy)


@pytest.fixture
def repos(history: tuple[History, dict[str, Answer]]) -> dict[str, Any]:
    """The conftest's Core indexes the history repository as `demo` (a GitHub origin)."""
    return {"demo": SimpleNamespace(path=history[0].repo)}


@pytest.fixture
def answers(history: tuple[History, dict[str, Answer]]) -> dict[str, Answer]:
    return history[1]


async def _answered(h: Harness, messages: Messages, skip: int = 0) -> str:
    """The answer's messages once its last one (with the 👍/👎 buttons) is in, joined."""
    await h.fake.wait_for(lambda: bool((got := messages()[skip:]) and got[-1].get("components")))
    await h.settle()
    return "\n".join(m["content"] for m in messages()[skip:])


def _check(content: str, answer: Answer) -> None:
    check_rendered(discord_sources(content), answer, DISCORD, DISCORD)
    body = "\n".join(line for line in content.splitlines() if not line.startswith("-# "))
    check_body(body, answer, DISCORD)
    assert "<https://github.com/acme/demo/commit/" in content and "|" not in content  # no mrkdwn


def test_a_mention_cites_what_the_core_cites(core: Core, answers: dict[str, Answer]) -> None:
    async def scenario() -> None:
        async with running(core) as h:
            for question in QUESTIONS:
                seen = len(h.fake.bot_messages(OPEN_CHANNEL))
                h.say(OPEN_CHANNEL, mention(question), mentions=[bot_user()])
                content = await _answered(h, lambda: h.fake.bot_messages(OPEN_CHANNEL), seen)
                _check(content, answers[question])

    run(scenario())


def test_a_dm_cites_what_the_core_cites(core: Core, answers: dict[str, Answer]) -> None:
    async def scenario() -> None:
        async with running(core) as h:
            dm = h.open_dm(ALICE)
            for question in QUESTIONS:
                seen = len(h.fake.bot_messages(dm))
                h.say(dm, question, guild_id=None)
                content = await _answered(h, lambda: h.fake.bot_messages(dm), seen)
                _check(content, answers[question])

    run(scenario())


def test_an_answer_in_a_thread_cites_what_the_core_cites(
    core: Core, answers: dict[str, Answer]
) -> None:
    async def scenario() -> None:
        async with running(core) as h:
            for question in QUESTIONS:
                asked = h.say(THREAD_CHANNEL, mention(question), mentions=[bot_user()])
                thread = int(asked["id"])  # a thread started from a message shares its id
                _check(await _answered(h, lambda: h.fake.bot_messages(thread)), answers[question])

    run(scenario())


def test_the_ask_command_cites_what_the_core_cites(core: Core, answers: dict[str, Answer]) -> None:
    async def scenario() -> None:
        async with running(core) as h:
            for question in QUESTIONS:
                state = h.slash("ask", {"question": question})
                content = await _answered(h, lambda: state.messages)
                assert content.startswith(f"> {question}")
                _check(content, answers[question])

    run(scenario())


def test_a_model_answer_links_the_commits_it_cites(
    llm_core: Core, llm: FakeOpenAI, answers: dict[str, Answer]
) -> None:
    """The model cites commits as [n] like code: masked links in the text and the footer;
    the code it cites says what last changed it."""
    llm.chat_reply = cite_two_commits_and_the_code
    given: list[Answer] = []
    real = llm_core.ask_stream
    llm_core.ask_stream = lambda *a, **k: real(*a, **k).then(keep(given))  # type: ignore[method-assign]

    async def scenario() -> None:
        async with running(llm_core) as h:
            for question in (WHY, WHO):
                seen = len(h.fake.bot_messages(OPEN_CHANNEL))
                h.say(OPEN_CHANNEL, mention(question), mentions=[bot_user()])
                content = await _answered(h, lambda: h.fake.bot_messages(OPEN_CHANNEL), seen)
                answer = given[-1]
                assert answer.mode == "llm"
                cited = [c.sha for c in answer.citations if c.kind == "commit"]
                reference = [c.sha for c in answers[question].citations if c.kind == "commit"]
                assert cited == reference[:2]  # the two it cited: the ranking's first two
                _check(content, answer)

    run(scenario())
    code = [c for a in given for c in a.citations if c.kind == "code"]
    assert code and all(c.changed for c in code), code


def keep(into: list[Answer]) -> Callable[[Answer], Answer]:
    def kept(answer: Answer) -> Answer:
        into.append(answer)
        return answer

    return kept
