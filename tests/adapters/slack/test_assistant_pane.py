"""The pane's helpers: the throttled status line, titles, pane threads, whose scope applies."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from slack_bolt.context.set_status import SetStatus
from slack_sdk import WebClient

from adapters.slack.assistant_pane import (
    STATUS_CHARS,
    TITLE_CHARS,
    PaneThreads,
    StatusLine,
    pane_context,
    status_text,
    title_of,
)
from bot.config import ChannelConfig
from bot.core import Context
from tests.servers.slack_assistant_fake import start_thread, status_shown
from tests.servers.slack_fake import BOT_TOKEN, FakeSlack

DM = "D0PANE"


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        fake.add_conversation(DM, "im")
        yield fake


@pytest.fixture
def client(slack: FakeSlack) -> WebClient:
    return WebClient(token=BOT_TOKEN, base_url=slack.base_url, retry_handlers=[])


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Later:
    """Collects what StatusLine schedules; the test decides when it runs."""

    def __init__(self) -> None:
        self.jobs: list[tuple[float, Callable[[], None]]] = []

    def __call__(self, delay: float, job: Callable[[], None]) -> None:
        self.jobs.append((delay, job))


def _line(sent: list[str], clock: Clock, later: Later) -> StatusLine:
    return StatusLine(sent.append, interval=1.0, clock=clock, later=later)


def test_updates_within_the_interval_wait_and_the_newest_wins() -> None:
    sent: list[str] = []
    clock, later = Clock(), Later()
    line = _line(sent, clock, later)
    line.show("searching…")
    line.show("searching…")  # the same again: nothing
    clock.now += 0.25
    line.show("searching billing…")
    line.show("reading 6 sources…")
    assert sent == ["is searching…"]
    [(delay, flush)] = later.jobs  # one wake-up, however many waited
    assert delay == pytest.approx(0.75)
    clock.now += 0.75
    flush()
    assert sent == ["is searching…", "is reading 6 sources…"]
    clock.now += 5
    line.show("writing the answer from 4 sources…")  # the interval is over: at once
    assert sent[-1] == "is writing the answer from 4 sources…"


def test_nothing_follows_the_answer() -> None:
    sent: list[str] = []
    clock, later = Clock(), Later()
    line = _line(sent, clock, later)
    line.show("searching…")
    clock.now += 0.1
    line.show("reading 2 sources…")
    line.done()  # the answer is being posted
    later.jobs[0][1]()
    line.show("writing…")
    assert sent == ["is searching…"]


def test_a_rate_limited_status_is_given_up_for_this_answer(
    slack: FakeSlack, client: WebClient
) -> None:
    thread = start_thread(slack, DM, "U1")
    line = StatusLine(SetStatus(client, DM, thread), interval=0.0)
    slack.fail_next(429, retry_after=30, method_or_path="assistant.threads.setStatus")
    line.show("searching…")  # refused at once: no 30-second wait
    line.show("reading 3 sources…")
    calls = [c for c in slack.calls if c.method == "assistant.threads.setStatus"]
    assert [c.status for c in calls] == [429]


def test_clear_takes_a_shown_status_down(slack: FakeSlack, client: WebClient) -> None:
    thread = start_thread(slack, DM, "U1")
    line = StatusLine(SetStatus(client, DM, thread), interval=0.0)
    line.show("searching…")
    assert status_shown(slack, DM, thread) == "is searching…"
    line.clear()
    assert status_shown(slack, DM, thread) == ""


def test_status_text_reads_after_the_app_name() -> None:
    assert status_text("searching billing…") == "is searching billing…"
    assert status_text("is thinking…") == "is thinking…"
    assert status_text("  \n ") == ""
    long = status_text("reading " + "x" * 500)
    assert len(long) <= STATUS_CHARS and long.endswith("…")


def test_titles_are_one_short_line_without_mentions() -> None:
    assert title_of("<@UBOT0001> where do we\nretry   webhooks?") == "where do we retry webhooks?"
    long = title_of("why " * 40)
    assert len(long) <= TITLE_CHARS and long.endswith("…") and "  " not in long
    assert not long.removesuffix("…").endswith(" ")
    assert title_of("<!here>") == "Question"


def test_pane_threads_are_told_from_other_dm_threads(slack: FakeSlack, client: WebClient) -> None:
    pane = start_thread(slack, DM, "U1")
    plain = slack.add_message(DM, "U1", "a DM")["ts"]
    threads = PaneThreads(client)
    assert threads.is_pane(DM, pane) and not threads.is_pane(DM, plain)
    asked = len(slack.calls_to("conversations.replies"))
    assert threads.is_pane(DM, pane) and not threads.is_pane(DM, plain)
    assert len(slack.calls_to("conversations.replies")) == asked  # remembered


def test_an_unreadable_thread_is_not_the_panes_and_is_asked_again(
    slack: FakeSlack, client: WebClient
) -> None:
    pane = start_thread(slack, DM, "U1")
    threads = PaneThreads(client)
    slack.fail_next(500, method_or_path="conversations.replies")
    assert not threads.is_pane(DM, pane)  # the DM handlers answer meanwhile
    assert threads.is_pane(DM, pane)


def test_a_viewed_channel_with_an_entry_lends_its_scope() -> None:
    dm = Context(platform="slack", user="U1", channel="D0PANE", guild="T1", is_dm=True)
    mapped = ChannelConfig(repos=("shop",))
    assert pane_context(dm, "C0SHOP", mapped).channel == "C0SHOP"
    assert pane_context(dm, "C0OTHER", None) == dm  # no entry: the DM's own scope
    assert pane_context(dm, "", None) == dm


def test_the_manifest_turns_the_pane_on() -> None:
    """Slack's AI-apps guide: the Agents & AI Apps feature (`features.assistant_view` with an
    `assistant_description`), the `assistant:write` scope, and the events
    assistant_thread_started, assistant_thread_context_changed and message.im."""
    manifest = Path(__file__).parents[3] / "adapters" / "slack" / "manifest.yml"
    text = manifest.read_text(encoding="utf-8")
    listed = set(re.findall(r"^\s+- ([a-z_.:]+)", text, re.M))
    assert {"assistant:write", "chat:write", "im:history"} <= listed
    assert {"assistant_thread_started", "assistant_thread_context_changed", "message.im"} <= listed
    features = text.split("\nfeatures:\n", 1)[1].split("\noauth_config:", 1)[0]
    view = re.search(r"^  assistant_view:\n((?:    .*\n|  #.*\n)+)", features, re.M)
    assert view is not None, "assistant_view must sit directly under features"
    description = re.search(r'^    assistant_description: "(.+)"$', view.group(1), re.M)
    assert description is not None and description.group(1).strip()
