"""Playing Slack's part in the AI-app pane: opening a pane thread, moving between channels,
writing in the thread (events as Slack's reference shows them, over signed HTTP)."""

from __future__ import annotations

import time
from typing import Any

from tests.servers.slack_assistant_fake import start_thread
from tests.servers.slack_fake import TEAM_ID, FakeSlack
from tests.support.slack_driver import CHANNEL, Driver, replies_in

PANE = "D0DM"  # the app's DM with the user: where pane threads live


def _thread_event(kind: str, user: str, thread_ts: str, viewing: str) -> dict[str, Any]:
    return {
        "type": kind,
        "assistant_thread": {
            "user_id": user,
            "context": {"channel_id": viewing, "team_id": TEAM_ID, "enterprise_id": None},
            "channel_id": PANE,
            "thread_ts": thread_ts,
        },
        "event_ts": f"{time.time():.6f}",
    }


def open_pane(driver: Driver, *, user: str = "UASKER", viewing: str = CHANNEL) -> str:
    """The user opens the pane while viewing `viewing`; the new thread's ts."""
    thread_ts = start_thread(driver.slack, PANE, user)
    event = _thread_event("assistant_thread_started", user, thread_ts, viewing)
    assert driver.event(event)[0] == 200
    return thread_ts


def move_to(driver: Driver, thread_ts: str, viewing: str, *, user: str = "UASKER") -> None:
    """The user, pane open, goes to another channel."""
    event = _thread_event("assistant_thread_context_changed", user, thread_ts, viewing)
    assert driver.event(event)[0] == 200


def ask_in_pane(driver: Driver, thread_ts: str, text: str, *, user: str = "UASKER") -> str:
    """The user writes in the pane thread (a `message.im` in the thread); the message ts."""
    msg = driver.say(
        text, channel=PANE, thread_ts=thread_ts, user=user, mention=False, channel_type="im"
    )
    return str(msg["ts"])


def pane_posts(slack: FakeSlack, thread_ts: str) -> list[dict[str, Any]]:
    return replies_in(slack, PANE, thread_ts)


def wait_posts(slack: FakeSlack, thread_ts: str, n: int) -> list[dict[str, Any]]:
    """Block until the bot has posted `n` messages in the pane thread."""
    return slack.wait_for(lambda: (p := pane_posts(slack, thread_ts)) and len(p) >= n and p)
