"""The fake Slack's chat streaming refuses what Slack refuses, through the real WebClient
(and its `chat_stream` helper), and records what each message showed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from tests.servers.slack_fake import BOT_TOKEN, TEAM_ID, FakeSlack

CHANNEL = "C0STREAM"
DM = "D0STREAM"


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        fake.add_conversation(CHANNEL, "public")
        fake.add_conversation(DM, "im")
        yield fake


@pytest.fixture
def client(slack: FakeSlack) -> WebClient:
    return WebClient(token=BOT_TOKEN, base_url=slack.base_url)


def asked(slack: FakeSlack, channel: str = CHANNEL) -> str:
    return str(slack.add_message(channel, "UASKER", "where are retries?")["ts"])


def error_of(call: object) -> str:
    with pytest.raises(SlackApiError) as caught:
        call()  # type: ignore[operator]
    return str(caught.value.response["error"])


def start(client: WebClient, thread_ts: str, text: str = "Retries ") -> str:
    resp = client.chat_startStream(
        channel=CHANNEL,
        thread_ts=thread_ts,
        markdown_text=text,
        recipient_team_id=TEAM_ID,
        recipient_user_id="UASKER",
    )
    return str(resp["ts"])


def test_a_stream_grows_then_stops_with_blocks_below_the_text(
    slack: FakeSlack, client: WebClient
) -> None:
    thread = asked(slack)
    ts = start(client, thread)
    client.chat_appendStream(channel=CHANNEL, ts=ts, markdown_text="use backoff.")
    blocks = [{"type": "context", "elements": [{"type": "mrkdwn", "text": "shop main@abc"}]}]
    client.chat_stopStream(channel=CHANNEL, ts=ts, blocks=blocks)
    assert [(v.method, v.text) for v in slack.views_of(ts)] == [
        ("chat.startStream", "Retries "),
        ("chat.appendStream", "Retries use backoff."),
        ("chat.stopStream", "Retries use backoff.\nshop main@abc"),
    ]
    [msg] = [m for m in slack.bot_posts(CHANNEL) if m["ts"] == ts]
    assert msg["thread_ts"] == thread and msg["text"] == "Retries use backoff."
    client.chat_update(channel=CHANNEL, ts=ts, text="the whole answer")
    assert slack.views_of(ts)[-1].text == "the whole answer"  # an update replaces it all


def test_the_sdk_helper_streams_through_the_fake(slack: FakeSlack, client: WebClient) -> None:
    thread = asked(slack)
    stream = client.chat_stream(
        channel=CHANNEL,
        thread_ts=thread,
        recipient_team_id=TEAM_ID,
        recipient_user_id="UASKER",
        buffer_size=4,
    )
    stream.append(markdown_text="Retries ")
    stream.append(markdown_text="back off.")
    stream.stop()
    assert stream.ts is not None
    assert slack.views_of(stream.ts)[-1].text == "Retries back off."


def test_unknown_or_missing_ts_is_refused(slack: FakeSlack, client: WebClient) -> None:
    asked(slack)
    ghost = "1700009999.000001"
    assert (
        error_of(lambda: client.chat_appendStream(channel=CHANNEL, ts=ghost, markdown_text="x"))
        == "message_not_found"
    )
    assert error_of(lambda: client.chat_stopStream(channel=CHANNEL, ts=ghost)) == (
        "message_not_found"
    )
    assert error_of(lambda: client.chat_stopStream(channel=CHANNEL, ts="")) == "invalid_arguments"


def test_a_message_that_is_not_streaming_cannot_be_appended_to(
    slack: FakeSlack, client: WebClient
) -> None:
    thread = asked(slack)
    posted = str(client.chat_postMessage(channel=CHANNEL, text="plain", thread_ts=thread)["ts"])
    assert (
        error_of(lambda: client.chat_appendStream(channel=CHANNEL, ts=posted, markdown_text="x"))
        == "message_not_in_streaming_state"
    )


def test_appending_or_stopping_after_stop_is_refused(slack: FakeSlack, client: WebClient) -> None:
    ts = start(client, asked(slack))
    client.chat_stopStream(channel=CHANNEL, ts=ts)
    assert (
        error_of(lambda: client.chat_appendStream(channel=CHANNEL, ts=ts, markdown_text="more"))
        == "message_not_in_streaming_state"
    )
    assert error_of(lambda: client.chat_stopStream(channel=CHANNEL, ts=ts)) == (
        "message_not_in_streaming_state"
    )


@pytest.mark.parametrize(
    ("recipient", "code"),
    [
        ({"recipient_user_id": "UASKER"}, "missing_recipient_team_id"),
        ({"recipient_team_id": TEAM_ID}, "missing_recipient_user_id"),
    ],
)
def test_a_channel_stream_needs_its_recipient(
    slack: FakeSlack, client: WebClient, recipient: dict[str, str], code: str
) -> None:
    thread = asked(slack)
    assert (
        error_of(
            lambda: client.chat_startStream(
                channel=CHANNEL, thread_ts=thread, markdown_text="x", **recipient
            )
        )
        == code
    )


def test_a_dm_stream_needs_no_recipient(slack: FakeSlack, client: WebClient) -> None:
    thread = asked(slack, DM)
    resp = client.chat_startStream(channel=DM, thread_ts=thread, markdown_text="Retries")
    assert resp["ok"]


def test_a_stream_is_a_reply_to_an_existing_message(slack: FakeSlack, client: WebClient) -> None:
    asked(slack)
    recipient = {"recipient_team_id": TEAM_ID, "recipient_user_id": "UASKER"}
    missing = slack.handle(
        "chat.startStream", {"channel": CHANNEL, "markdown_text": "x", **recipient}, BOT_TOKEN
    )
    assert missing["error"] == "invalid_arguments"
    assert (
        error_of(
            lambda: client.chat_startStream(
                channel=CHANNEL, thread_ts="1700009999.000001", markdown_text="x", **recipient
            )
        )
        == "thread_not_found"
    )


def test_more_than_12000_characters_a_call_is_refused(slack: FakeSlack, client: WebClient) -> None:
    thread = asked(slack)
    assert error_of(lambda: start(client, thread, "x" * 12_001)) == "msg_too_long"
    ts = start(client, thread, "x" * 12_000)
    big = "y" * 12_001
    assert (
        error_of(lambda: client.chat_appendStream(channel=CHANNEL, ts=ts, markdown_text=big))
        == "msg_too_long"
    )
    chunks = [{"type": "markdown_text", "text": "y" * 6_001}] * 2
    assert (
        error_of(lambda: client.chat_appendStream(channel=CHANNEL, ts=ts, chunks=chunks))
        == "msg_too_long"
    )
    assert error_of(lambda: client.chat_stopStream(channel=CHANNEL, ts=ts, markdown_text=big)) == (
        "msg_too_long"
    )


def test_bad_chunks_and_empty_appends_are_refused(slack: FakeSlack, client: WebClient) -> None:
    ts = start(client, asked(slack))
    assert (
        error_of(
            lambda: client.chat_appendStream(channel=CHANNEL, ts=ts, chunks=[{"type": "image"}])
        )
        == "invalid_chunks"
    )
    assert error_of(lambda: client.chat_appendStream(channel=CHANNEL, ts=ts)) == (
        "invalid_arguments"
    )


def test_stop_blocks_follow_the_message_rules(slack: FakeSlack, client: WebClient) -> None:
    ts = start(client, asked(slack))
    too_long = [{"type": "section", "text": {"type": "mrkdwn", "text": "z" * 3001}}]
    assert error_of(lambda: client.chat_stopStream(channel=CHANNEL, ts=ts, blocks=too_long)) == (
        "invalid_blocks"
    )


@pytest.mark.parametrize("code", ["not_allowed", "method_deprecated"])
def test_a_workspace_can_refuse_streaming(slack: FakeSlack, client: WebClient, code: str) -> None:
    slack.refuse_streaming = code
    assert error_of(lambda: start(client, asked(slack))) == code
    assert not slack.views


def test_rate_limits_apply_to_stream_methods(slack: FakeSlack, client: WebClient) -> None:
    ts = start(client, asked(slack))
    slack.fail_next(429, retry_after=1, method_or_path="chat.appendStream")
    with pytest.raises(SlackApiError) as caught:
        client.chat_appendStream(channel=CHANNEL, ts=ts, markdown_text="x")
    assert caught.value.response.status_code == 429
    assert caught.value.response.headers["Retry-After"] == "1"
    client.chat_appendStream(channel=CHANNEL, ts=ts, markdown_text="x")  # the next one passes
    assert slack.views_of(ts)[-1].text == "Retries x"
