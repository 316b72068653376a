"""The fake's AI-app pane refuses what Slack's reference says Slack refuses (real WebClient)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from tests.servers.slack_assistant_fake import start_thread, status_shown, thread_title
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


def _error(call: Any) -> str:
    with pytest.raises(SlackApiError) as err:
        call()
    return str(err.value.response["error"])


def test_status_needs_its_arguments_and_a_known_thread(slack: FakeSlack, client: WebClient) -> None:
    thread = start_thread(slack, DM, "U1")
    api = client.api_call
    no_status = {"channel_id": DM, "thread_ts": thread}
    assert _error(lambda: api("assistant.threads.setStatus", json=no_status)) == "invalid_arguments"
    assert (
        _error(
            lambda: client.assistant_threads_setStatus(channel_id=DM, thread_ts="1.2", status="x")
        )
        == "invalid_thread_ts"
    )
    assert (
        _error(
            lambda: client.assistant_threads_setStatus(
                channel_id="D0NONE", thread_ts=thread, status="x"
            )
        )
        == "channel_not_found"
    )
    eleven = [f"step {i}" for i in range(11)]
    assert (
        _error(
            lambda: client.assistant_threads_setStatus(
                channel_id=DM, thread_ts=thread, status="is busy", loading_messages=eleven
            )
        )
        == "invalid_arguments"
    )
    client.assistant_threads_setStatus(channel_id=DM, thread_ts=thread, status="is reading…")
    assert status_shown(slack, DM, thread) == "is reading…"
    client.chat_postMessage(channel=DM, thread_ts=thread, text="done")
    assert status_shown(slack, DM, thread) == ""  # a reply clears it, as in Slack


def test_title_only_on_a_pane_thread(slack: FakeSlack, client: WebClient) -> None:
    thread = start_thread(slack, DM, "U1")
    plain = slack.add_message(DM, "U1", "hello")["ts"]
    assert (
        _error(lambda: client.assistant_threads_setTitle(channel_id=DM, thread_ts=plain, title="t"))
        == "invalid_thread_ts"
    )
    assert (
        _error(lambda: client.assistant_threads_setTitle(channel_id=DM, thread_ts=thread, title=""))
        == "invalid_arguments"
    )
    client.assistant_threads_setTitle(channel_id=DM, thread_ts=thread, title="Retries")
    assert thread_title(slack, DM, thread) == "Retries"


def test_at_most_four_complete_prompts(slack: FakeSlack, client: WebClient) -> None:
    thread = start_thread(slack, DM, "U1")

    def prompts(items: list[dict[str, str]]) -> Any:
        return lambda: client.assistant_threads_setSuggestedPrompts(
            channel_id=DM, thread_ts=thread, prompts=items
        )

    five = [{"title": f"t{i}", "message": f"m{i}"} for i in range(5)]
    assert _error(prompts(five)) == "invalid_arguments"
    assert _error(prompts([])) == "invalid_arguments"
    assert _error(prompts([{"title": "no message"}])) == "invalid_arguments"
    assert _error(prompts([{"title": "", "message": "m"}])) == "invalid_arguments"
    prompts(five[:4])()
    assert len(slack.calls_to("assistant.threads.setSuggestedPrompts")) == 1


def test_metadata_is_checked_and_listed_on_request(slack: FakeSlack, client: WebClient) -> None:
    thread = start_thread(slack, DM, "U1")
    bad = {"event_type": "", "event_payload": {}}
    assert (
        _error(
            lambda: client.chat_postMessage(channel=DM, thread_ts=thread, text="x", metadata=bad)
        )
        == "invalid_metadata_format"
    )
    meta = {"event_type": "assistant_thread_context", "event_payload": {"channel_id": "C1"}}
    client.chat_postMessage(channel=DM, thread_ts=thread, text="hi", metadata=meta)
    plain = client.conversations_replies(channel=DM, ts=thread)["messages"]
    assert not any("metadata" in m for m in plain)
    full = client.conversations_replies(channel=DM, ts=thread, include_all_metadata=True)
    assert full["messages"][-1]["metadata"] == meta
    assert full["messages"][0]["subtype"] == "assistant_app_thread"
