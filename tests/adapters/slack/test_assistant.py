"""Slack's AI-app pane through the real Bolt app over signed HTTP, against the strict fake.

The Core is real over two real indexed git repositories (shop: webhooks, billing:
discounts); `codecite.toml` maps C0SHOP to shop only (see conftest).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adapters.slack.app import build_bot
from adapters.slack.serve import start_http
from bot.config import Settings, load_file_config
from bot.core import Core
from bot.retrieval.symbol_questions import detect_symbol_question
from tests.servers.openai_fake import FakeOpenAI
from tests.servers.slack_assistant_fake import status_shown, thread_title
from tests.servers.slack_fake import BOT_TOKEN, FakeSlack
from tests.support.slack_driver import CHANNEL, SIGNING_SECRET, Driver, Running, _run
from tests.support.slack_pane import (
    PANE,
    ask_in_pane,
    move_to,
    open_pane,
    pane_posts,
    wait_posts,
)

QUESTION = "where do we retry failed webhooks?"
DISCOUNTS = "how is the volume discount computed?"


def _drain(*runs: Running) -> None:
    for run in runs:
        run.server.stop()
        run.bot.close()


def _pane_calls(slack: FakeSlack, method: str) -> list[dict[str, Any]]:
    return [c.params for c in slack.calls_to(f"assistant.threads.{method}")]


def _prompts(slack: FakeSlack) -> list[dict[str, str]]:
    params = slack.wait_for(lambda: _pane_calls(slack, "setSuggestedPrompts"))[-1]
    return list(params["prompts"])


# -- greeting and suggested prompts -----------------------------------------------------------


def test_a_new_pane_thread_is_greeted_with_prompts_from_the_index(
    slack: FakeSlack, driver: Driver
) -> None:
    thread_ts = open_pane(driver, viewing=CHANNEL)  # no entry: every repository
    [hello] = wait_posts(slack, thread_ts, 1)
    assert "*billing*" in hello["text"] and "*shop*" in hello["text"]
    prompts = _prompts(slack)
    assert 1 <= len(prompts) <= 4
    messages = [p["message"] for p in prompts]
    assert {"How is billing organised?", "How is shop organised?"} <= set(messages)
    symbols = [m for m in messages if m.startswith("Where is `")]
    assert symbols, messages
    for message in messages:  # each one a question the symbol table answers exactly
        assert detect_symbol_question(message) is not None, message
    # Bolt's say() keeps the thread context in the greeting's metadata.
    assert hello["metadata"]["event_payload"]["channel_id"] == CHANNEL
    params = _pane_calls(slack, "setSuggestedPrompts")[-1]
    assert (params["channel_id"], params["thread_ts"]) == (PANE, thread_ts)


def test_prompts_follow_the_viewed_channels_scope(slack: FakeSlack, driver: Driver) -> None:
    open_pane(driver, viewing="C0SHOP")  # mapped to shop only
    prompts = _prompts(slack)
    text = " ".join(p["title"] + p["message"] for p in prompts)
    assert "How is shop organised?" in text
    assert "billing" not in text and "compute_volume_discount" not in text


def test_a_refused_dm_user_is_told_in_one_sentence(
    slack: FakeSlack, driver: Driver, core: Core
) -> None:
    core.use_config(core.config.model_copy(update={"dm_allowlist": ("USOMEONE",)}))
    thread_ts = open_pane(driver)
    [hello] = wait_posts(slack, thread_ts, 1)
    assert "Direct messages to codecite are not enabled for you" in hello["text"]
    assert "incident" in hello["text"] and "Traceback" not in hello["text"]
    assert not _pane_calls(slack, "setSuggestedPrompts")


# -- questions: status, title, answer ---------------------------------------------------------


def test_a_question_shows_a_status_titles_the_thread_and_is_answered_there(
    slack: FakeSlack, driver: Driver, running: Running
) -> None:
    thread_ts = open_pane(driver)
    wait_posts(slack, thread_ts, 1)
    ask_in_pane(driver, thread_ts, QUESTION)
    _, answer = wait_posts(slack, thread_ts, 2)
    assert "`shop/webhooks.py:L" in answer["text"] and "shop main@" in answer["text"]
    assert answer["blocks"][-1]["type"] == "actions"  # the 👍/👎 buttons
    methods = [c.method for c in slack.calls if c.ok]
    first_status = methods.index("assistant.threads.setStatus")
    assert first_status < len(methods) - 1 - methods[::-1].index("chat.postMessage")
    assert _pane_calls(slack, "setStatus")[0]["status"] == "is searching…"
    assert thread_title(slack, PANE, thread_ts) == QUESTION
    assert status_shown(slack, PANE, thread_ts) == ""  # the answer took it down
    _drain(running)
    assert not slack.calls_to("reactions.add")  # the DM handlers never saw it


def test_a_retried_pane_message_is_answered_once(
    slack: FakeSlack, driver: Driver, running: Running
) -> None:
    thread_ts = open_pane(driver)
    wait_posts(slack, thread_ts, 1)
    ts = ask_in_pane(driver, thread_ts, QUESTION)
    event = {"type": "message", "channel_type": "im", "channel": PANE, "user": "UASKER"}
    event.update(text=QUESTION, ts=ts, thread_ts=thread_ts)
    assert driver.event(event, event_id="EvRETRY", retry=1)[0] == 200
    wait_posts(slack, thread_ts, 2)
    _drain(running)
    assert len(pane_posts(slack, thread_ts)) == 2  # the greeting and one answer
    assert not slack.calls_to("reactions.add")


def test_a_second_question_keeps_the_title(
    slack: FakeSlack, driver: Driver, running: Running
) -> None:
    thread_ts = open_pane(driver)
    wait_posts(slack, thread_ts, 1)
    ask_in_pane(driver, thread_ts, QUESTION)
    wait_posts(slack, thread_ts, 2)
    ask_in_pane(driver, thread_ts, "and who calls it?")
    wait_posts(slack, thread_ts, 3)
    assert len(_pane_calls(slack, "setTitle")) == 1
    assert thread_title(slack, PANE, thread_ts) == QUESTION


def test_the_cores_progress_feeds_the_status_line(slack: FakeSlack, core: Core) -> None:
    bot = build_bot(core, status_interval=0.0)  # every stage shown, however quick
    run = Running(bot, start_http(bot, host="127.0.0.1", port=0))
    try:
        driver = Driver(slack, run.server.url())
        thread_ts = open_pane(driver)
        wait_posts(slack, thread_ts, 1)
        ask_in_pane(driver, thread_ts, QUESTION)
        wait_posts(slack, thread_ts, 2)
    finally:
        _drain(run)
    statuses = [p["status"] for p in _pane_calls(slack, "setStatus")]
    assert statuses[0] == "is searching…"  # at once, before the thread is read
    searching = [s for s in statuses[1:] if s.startswith("is searching ")]
    assert searching and "webhooks" in searching[0]  # the core names the subject
    assert any(s.startswith("is reading ") and "source" in s for s in statuses)
    assert all(
        c.params["thread_ts"] == thread_ts for c in slack.calls_to("assistant.threads.setStatus")
    )
    assert status_shown(slack, PANE, thread_ts) == ""


def test_a_pane_thread_started_on_another_process_is_recognised(
    slack: FakeSlack, driver: Driver, running: Running, start_app: Any
) -> None:
    thread_ts = open_pane(driver)
    wait_posts(slack, thread_ts, 1)
    other = start_app()  # it never saw the thread start: it asks Slack for the parent
    driver.url = other.server.url()  # same driver: event ids stay unique
    ask_in_pane(driver, thread_ts, QUESTION)
    wait_posts(slack, thread_ts, 2)
    _drain(running, other)
    assert _pane_calls(slack, "setTitle")  # the pane's path, not the DM handlers'
    assert not slack.calls_to("reactions.add")
    assert len(pane_posts(slack, thread_ts)) == 2


def test_commands_and_limits_answer_in_one_sentence(
    slack: FakeSlack,
    config_toml: Path,
    indexed_home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with config_toml.open("a", encoding="utf-8") as toml:
        toml.write("[limits]\nper_user_per_minute = 1\n")
    core = _fresh_core(slack, config_toml, indexed_home, monkeypatch)
    run = _run(core)
    try:
        driver = Driver(slack, run.server.url())
        thread_ts = open_pane(driver)
        wait_posts(slack, thread_ts, 1)
        ask_in_pane(driver, thread_ts, "help")  # a bare command is run, not searched
        assert "/codecite" in wait_posts(slack, thread_ts, 2)[-1]["text"]
        ask_in_pane(driver, thread_ts, QUESTION)
        wait_posts(slack, thread_ts, 3)
        ask_in_pane(driver, thread_ts, "and who calls it?")
        refused = wait_posts(slack, thread_ts, 4)[-1]["text"]
    finally:
        _drain(run)
        core.close()
    assert "asking faster than 1 question a minute" in refused and "incident" in refused
    assert status_shown(slack, PANE, thread_ts) == ""


def test_an_unexpected_failure_is_one_sentence_without_details(
    slack: FakeSlack, driver: Driver, core: Core, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("database password is hunter2")

    monkeypatch.setattr(core, "ask_stream", broken)
    thread_ts = open_pane(driver)
    wait_posts(slack, thread_ts, 1)
    ask_in_pane(driver, thread_ts, QUESTION)
    text = wait_posts(slack, thread_ts, 2)[-1]["text"]
    assert "Something went wrong on my side" in text and "incident" in text
    assert "hunter2" not in text and "RuntimeError" not in text


# -- the viewed channel decides the scope -----------------------------------------------------


def test_moving_to_a_mapped_channel_narrows_the_answers(slack: FakeSlack, driver: Driver) -> None:
    thread_ts = open_pane(driver, viewing=CHANNEL)
    wait_posts(slack, thread_ts, 1)
    ask_in_pane(driver, thread_ts, DISCOUNTS)
    _, wide = wait_posts(slack, thread_ts, 2)
    assert "billing/discounts.py" in wide["text"]
    move_to(driver, thread_ts, "C0SHOP")
    hello = slack.wait_for(
        lambda: (
            (m := pane_posts(slack, thread_ts)[0])["metadata"]["event_payload"]["channel_id"]
            == "C0SHOP"
            and m
        )
    )
    assert hello["blocks"]  # the greeting kept its text and blocks
    ask_in_pane(driver, thread_ts, DISCOUNTS)
    narrow = wait_posts(slack, thread_ts, 3)[-1]
    assert "billing" not in narrow["text"]
    assert "shop main@" in narrow["text"]


# -- ordinary DMs stay with the handlers ------------------------------------------------------


def test_dms_outside_the_pane_are_answered_as_before(
    slack: FakeSlack, driver: Driver, running: Running
) -> None:
    top = driver.say(QUESTION, channel=PANE, channel_type="im", mention=False)
    [flat] = slack.wait_for(lambda: slack.bot_posts(PANE))
    assert "thread_ts" not in flat
    driver.say(
        "and who calls it?",
        channel=PANE,
        channel_type="im",
        mention=False,
        thread_ts=top["ts"],
    )
    slack.wait_for(lambda: pane_posts(slack, top["ts"]))
    _drain(running)
    assert len(slack.calls_to("reactions.add")) == 2  # the handlers' 👀, once per message
    assert not [c for c in slack.calls if c.method.startswith("assistant.threads.")]
    assert len(pane_posts(slack, top["ts"])) == 1


# -- follow-ups keep the conversation (a model on the fake OpenAI server) ---------------------


def _fresh_core(
    slack: FakeSlack,
    config_toml: Path,
    indexed_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    **env: str,
) -> Core:
    """A Core as the conftest's, built now (after the test changed its config or env)."""
    env = {
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "CODECITE_SLACK_API_URL": slack.base_url,
        "CODECITE_CONFIG": str(config_toml),
        **env,
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = Settings()
    shutil.copytree(indexed_home, settings.home)
    return Core.from_settings(settings, load_file_config(config_toml))


@pytest.fixture
def model_core(
    slack: FakeSlack,
    config_toml: Path,
    indexed_home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[Core, FakeOpenAI]]:
    with FakeOpenAI() as openai:
        core = _fresh_core(
            slack,
            config_toml,
            indexed_home,
            monkeypatch,
            OPENAI_API_KEY="sk-test-pane-0123456789",
            OPENAI_BASE_URL=openai.base_url,
            CODECITE_EMBED_MODEL="none",
        )
        yield core, openai
        core.close()


def test_a_follow_up_carries_the_earlier_turns_to_the_model(
    slack: FakeSlack, model_core: tuple[Core, FakeOpenAI]
) -> None:
    core, openai = model_core
    run = _run(core)
    try:
        driver = Driver(slack, run.server.url())
        thread_ts = open_pane(driver)
        wait_posts(slack, thread_ts, 1)
        ask_in_pane(driver, thread_ts, QUESTION)
        wait_posts(slack, thread_ts, 2)
        asked = len(openai.bodies("/chat/completions"))
        ask_in_pane(driver, thread_ts, "how many attempts does it make?")
        wait_posts(slack, thread_ts, 3)
    finally:
        _drain(run)
    later = openai.bodies("/chat/completions")[asked:]
    answering = [b for b in later if "how many attempts" in str(b["messages"])]
    assert answering, "the follow-up never reached the model"
    contents = [str(m.get("content")) for m in answering[-1]["messages"]]
    assert any(QUESTION in c for c in contents)  # the earlier question, as a turn
    greeting = pane_posts(slack, thread_ts)[0]["text"]
    assert not any(greeting[:40] in c for c in contents)  # the greeting is no turn


def test_a_pane_answer_streams_into_its_thread(
    slack: FakeSlack, model_core: tuple[Core, FakeOpenAI]
) -> None:
    core, openai = model_core
    openai.chat_reply = lambda body: "Deliveries are retried with backoff until they give up. " * 6
    openai.stream_interval = 0.01
    run = _run(core)
    try:
        driver = Driver(slack, run.server.url())
        thread_ts = open_pane(driver)
        wait_posts(slack, thread_ts, 1)
        ask_in_pane(driver, thread_ts, QUESTION)
        wait_posts(slack, thread_ts, 2)
        slack.wait_for(lambda: slack.calls_to("chat.stopStream") or None)
    finally:
        _drain(run)
    started = slack.calls_to("chat.startStream")
    assert len(started) == 1 and started[0].params["thread_ts"] == thread_ts
    answer = pane_posts(slack, thread_ts)[-1]
    assert answer["text"].count("until they give up.") == 6
    assert len(pane_posts(slack, thread_ts)) == 2  # the greeting and one answer
    assert not slack.calls_to("chat.postMessage")[1:]  # only the greeting was posted whole
