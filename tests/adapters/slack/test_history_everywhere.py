"""History questions through the real Bolt app against the fake Slack: a mention, a DM, the
slash command and the assistant pane each cite the commits the shared core cites, in its
order, with date, author, subject and mrkdwn links (`<url|label>`) to commits and PRs."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.models import Answer
from tests.servers.openai_fake import FakeOpenAI
from tests.servers.slack_fake import FakeSlack
from tests.support.history_everywhere import (
    QUESTIONS,
    SLACK,
    WHO,
    WHY,
    check_body,
    check_rendered,
    cite_two_commits_and_the_code,
    indexed_history,
    reference,
    slack_sources,
)
from tests.support.slack_driver import CHANNEL, Driver, Recorded, replies_in
from tests.support.slack_pane import PANE, ask_in_pane, open_pane, pane_posts
from tests.support.streaming import KEY

DM = PANE  # the app's DM with the user: flat DMs and pane threads both live there


@pytest.fixture(scope="module")
def history_answers(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Answer]]:
    history = indexed_history(tmp_path_factory.mktemp("history-slack"))
    copy = history.home.parent / "reference-home"
    shutil.copytree(history.home, copy)
    return history.home, reference(copy)


@pytest.fixture
def answering() -> str:
    """How the Core answers: "extractive" (no model), or "model" (parametrized)."""
    return "extractive"


@pytest.fixture
def indexed_home(
    history_answers: tuple[Path, dict[str, Answer]],
    answering: str,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> Path:
    """The conftest's Core starts from this data directory (the history repository); with
    `answering` "model" it answers with the fake model (its env is set first)."""
    if answering == "model":
        model: FakeOpenAI = request.getfixturevalue("model")
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", model.base_url)
        monkeypatch.setenv("CODECITE_EMBED_MODEL", "none")
        monkeypatch.setenv("CODECITE_STREAM", "1")
    return history_answers[0]


@pytest.fixture
def model() -> Iterator[FakeOpenAI]:
    """A model that cites the first two commits it was given and the code."""
    with FakeOpenAI() as fake:
        fake.chat_reply = cite_two_commits_and_the_code
        yield fake


def _answered(slack: FakeSlack, posts: Callable[[], list[dict[str, Any]]]) -> tuple[str, str]:
    """Once the answer's last message (the one with 👍/👎) is in: its mrkdwn text, and the
    text of its section blocks (what Slack shows when it takes the blocks)."""

    def done() -> list[dict[str, Any]] | None:
        got = posts()
        return got if got and (got[-1].get("blocks") or [{}])[-1].get("type") == "actions" else None

    got = slack.wait_for(done, timeout=60)
    text = "\n\n".join(m["text"] for m in got)
    blocks = [b["text"]["text"] for m in got for b in m["blocks"] if b["type"] == "section"]
    return text, "\n\n".join(blocks)


def _check(received: tuple[str, str], answer: Answer) -> None:
    for text in received:  # the fallback text and the blocks say the same
        check_rendered(slack_sources(text), answer, SLACK, SLACK)
        check_body(text.split("*Sources*", 1)[0], answer, SLACK)
        assert "](<" not in text  # no Discord markdown


def _top_level(slack: FakeSlack, channel: str, skip: int) -> list[dict[str, Any]]:
    return [m for m in slack.bot_posts(channel) if "thread_ts" not in m][skip:]


def _each_top_level(
    slack: FakeSlack, channel: str, ask: Callable[[str], object], answers: dict[str, Answer]
) -> list[str]:
    """Ask every question in turn, check each answer as posted at the top of `channel`;
    their texts."""
    texts = []
    for question in QUESTIONS:
        seen = len(_top_level(slack, channel, 0))
        ask(question)
        received = _answered(slack, lambda seen=seen: _top_level(slack, channel, seen))
        texts.append(received[0])
        _check(received, answers[question])
    return texts


def test_a_mention_cites_what_the_core_cites(
    slack: FakeSlack, driver: Driver, history_answers: tuple[Path, dict[str, Answer]]
) -> None:
    answers = history_answers[1]
    for question in QUESTIONS:
        msg = driver.say(question)
        _check(_answered(slack, lambda: replies_in(slack, CHANNEL, msg["ts"])), answers[question])


def test_a_dm_cites_what_the_core_cites(
    slack: FakeSlack, driver: Driver, history_answers: tuple[Path, dict[str, Answer]]
) -> None:
    def ask(question: str) -> object:
        return driver.say(question, channel=DM, channel_type="im", mention=False)

    _each_top_level(slack, DM, ask, history_answers[1])


def test_the_slash_command_cites_what_the_core_cites(
    slack: FakeSlack, driver: Driver, history_answers: tuple[Path, dict[str, Answer]]
) -> None:
    def ask(question: str) -> object:
        status, _, _ = driver.command(f"ask {question}")
        assert status == 200
        return status

    texts = _each_top_level(slack, CHANNEL, ask, history_answers[1])
    assert all(t.startswith("*<@UASKER> asked:*") for t in texts)


def test_the_assistant_pane_cites_what_the_core_cites(
    slack: FakeSlack, driver: Driver, history_answers: tuple[Path, dict[str, Answer]]
) -> None:
    answers = history_answers[1]
    for question in QUESTIONS:
        thread_ts = open_pane(driver)
        slack.wait_for(lambda ts=thread_ts: pane_posts(slack, ts))  # the greeting
        ask_in_pane(driver, thread_ts, question)
        received = _answered(slack, lambda ts=thread_ts: pane_posts(slack, ts)[1:])
        _check(received, answers[question])


@pytest.mark.parametrize("answering", ["model"])
def test_a_model_answer_links_the_commits_it_cites(
    slack: FakeSlack,
    driver: Driver,
    recorded: Recorded,
    history_answers: tuple[Path, dict[str, Answer]],
) -> None:
    """With a model the commits are sources it cites as [n]: each becomes the commit's
    linked label in the text, and a source line like any other; code it cites says what last
    changed it."""
    for n, question in enumerate((WHY, WHO)):
        msg = driver.say(question)
        received = _answered(slack, lambda ts=msg["ts"]: replies_in(slack, CHANNEL, ts))
        answer = recorded.answers[n]
        assert answer.mode == "llm"  # written whole, then posted: history answers do not stream
        cited = [c.sha for c in answer.citations if c.kind == "commit"]
        reference = [c.sha for c in history_answers[1][question].citations if c.kind == "commit"]
        assert cited == reference[:2]  # the two it cited: the ranking's first two
        _check(received, answer)
    code = [c for a in recorded.answers for c in a.citations if c.kind == "code"]
    assert code and all(c.changed for c in code), code  # f5's lines, beside its commits
