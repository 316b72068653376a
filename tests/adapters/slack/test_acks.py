"""Every Slack request is acknowledged within Slack's 3 seconds, whatever the Web API does.

Each path is driven over signed HTTP while the Web API calls that path makes are rate
limited (429 with `Retry-After`, which slack_sdk waits out before trying again): a
mention, a DM, a DM thread outside the pane, a message in a pane thread this process
never saw start, a slash command and a button click. The last two are acknowledged by
their listener, on Bolt's listener pool: they are sent while earlier events' work waits
on rate-limited calls, more of them than that pool has threads. Each request is still
answered once the limits pass.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from adapters.slack.app import LISTENER_THREADS
from adapters.slack.render import VOTE_UP
from tests.servers.slack_assistant_fake import start_thread
from tests.servers.slack_fake import BOT_USER_ID, FakeSlack
from tests.support.slack_driver import CHANNEL, Driver, Running, replies_in
from tests.support.slack_pane import PANE, pane_posts

ACK_DEADLINE = 3.0  # Slack's: an unacknowledged request is retried, a command fails
RETRY_AFTER = 5  # seconds each rate-limited call makes its caller wait
QUESTION = "where do we retry failed webhooks?"


def _acked(send: Callable[[], tuple[int, Any]]) -> float:
    """Send one request; the seconds until its acknowledgement (which must be 200)."""
    started = time.monotonic()
    status = send()[0]
    seconds = time.monotonic() - started
    assert status == 200
    return seconds


def _mention(driver: Driver, text: str, channel: str = CHANNEL) -> tuple[dict[str, Any], float]:
    """A user mentions the bot; the seconds until the `app_mention` was acknowledged."""
    slack = driver.slack
    text = f"<@{BOT_USER_ID}> {text}"
    msg = slack.add_message(channel, "UASKER", text)
    event = {"type": "app_mention", "user": "UASKER", "text": text, "ts": msg["ts"]}
    return msg, _acked(lambda: driver.event({**event, "channel": channel}))


def _dm(driver: Driver, text: str, thread_ts: str | None = None) -> tuple[dict[str, Any], float]:
    slack = driver.slack
    msg = slack.add_message(PANE, "UASKER", text, thread_ts=thread_ts)
    event = {"type": "message", "channel_type": "im", "user": "UASKER", "text": text}
    event.update(ts=msg["ts"], channel=PANE, **({"thread_ts": thread_ts} if thread_ts else {}))
    return msg, _acked(lambda: driver.event(event))


def _rate_limited(slack: FakeSlack, method: str, count: int = 1) -> None:
    slack.fail_next(429, count=count, retry_after=RETRY_AFTER, method_or_path=method)


def _busy_listeners(slack: FakeSlack, driver: Driver) -> None:
    """More mentions than Bolt has listener threads, each waiting on a rate-limited 👀."""
    count = LISTENER_THREADS + 4
    _rate_limited(slack, "reactions.add", count=count)
    for number in range(count):
        _mention(driver, f"{QUESTION} ({number})")

    def limited() -> int:
        return sum(c.method == "reactions.add" and c.status == 429 for c in slack.calls)

    slack.wait_for(lambda: limited() >= LISTENER_THREADS)


def test_the_first_mention_is_acknowledged_before_any_web_api_call(
    slack: FakeSlack, driver: Driver
) -> None:
    _rate_limited(slack, "auth.test")  # Bolt's authorization asked it at the first request
    _rate_limited(slack, "reactions.add")
    msg, seconds = _mention(driver, QUESTION)
    assert seconds < ACK_DEADLINE
    slack.wait_for(lambda: replies_in(slack, CHANNEL, msg["ts"]), timeout=30)


def test_a_dm_is_acknowledged_while_its_lookups_are_rate_limited(
    slack: FakeSlack, driver: Driver
) -> None:
    _rate_limited(slack, "reactions.add")
    _rate_limited(slack, "conversations.info")
    _, seconds = _dm(driver, QUESTION)
    assert seconds < ACK_DEADLINE
    slack.wait_for(lambda: slack.bot_posts(PANE), timeout=30)


def test_a_dm_thread_outside_the_pane_is_acknowledged_before_it_is_looked_up(
    slack: FakeSlack, driver: Driver
) -> None:
    top = slack.add_message(PANE, "UASKER", "an earlier question")
    _rate_limited(slack, "conversations.replies")  # is this thread the pane's?
    _, seconds = _dm(driver, QUESTION, thread_ts=top["ts"])
    assert seconds < ACK_DEADLINE
    # Not a pane thread: the ordinary handlers answer it, in the thread.
    slack.wait_for(lambda: pane_posts(slack, top["ts"]), timeout=30)
    assert not [c for c in slack.calls if c.method.startswith("assistant.threads.")]


def test_a_pane_thread_never_seen_starting_is_acknowledged_before_it_is_looked_up(
    slack: FakeSlack, driver: Driver
) -> None:
    thread_ts = start_thread(slack, PANE, "UASKER")  # started while another process ran
    _rate_limited(slack, "conversations.replies")
    _, seconds = _dm(driver, QUESTION, thread_ts=thread_ts)
    assert seconds < ACK_DEADLINE
    slack.wait_for(lambda: pane_posts(slack, thread_ts), timeout=30)
    assert slack.calls_to("assistant.threads.setStatus")  # answered as the pane's


def test_a_slash_command_is_acknowledged_while_the_listeners_wait_on_slack(
    slack: FakeSlack, driver: Driver
) -> None:
    _busy_listeners(slack, driver)
    started = time.monotonic()
    status, _, response_url = driver.command("help")
    assert status == 200
    assert time.monotonic() - started < ACK_DEADLINE
    rid = response_url.rsplit("/", 1)[-1]
    slack.wait_for(lambda: slack.calls_to(f"response_url:{rid}"), timeout=30)


def test_a_button_click_is_acknowledged_while_the_listeners_wait_on_slack(
    slack: FakeSlack, driver: Driver, running: Running
) -> None:
    msg, _ = _mention(driver, QUESTION)
    [answer] = slack.wait_for(lambda: replies_in(slack, CHANNEL, msg["ts"]), timeout=30)
    _busy_listeners(slack, driver)
    response_url = slack.new_response_url()
    seconds = _acked(
        lambda: (
            driver.click(
                VOTE_UP,
                _answer_id(answer),
                user="UVOTER",
                message=answer,
                response_url=response_url,
            ),
            None,
        )
    )
    assert seconds < ACK_DEADLINE
    rid = response_url.rsplit("/", 1)[-1]
    slack.wait_for(lambda: slack.calls_to(f"response_url:{rid}"), timeout=30)


def _answer_id(message: dict[str, Any]) -> str:
    for block in message.get("blocks") or []:
        for element in block.get("elements") or []:
            if element.get("action_id") == VOTE_UP:
                return str(element["value"])
    raise AssertionError("the answer has no vote buttons")
