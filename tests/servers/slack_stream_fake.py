"""The fake Slack's chat streaming (`chat.startStream/appendStream/stopStream`), as strict
as Slack, and what a person sees of each message at every moment (`FakeSlack.views`).

Rules, from Slack's method reference and what apps report from real workspaces:
- startStream needs `channel` and `thread_ts` (streamed messages are replies: a missing
  one is `invalid_arguments`, an unknown one `thread_not_found`); outside a DM it needs
  `recipient_team_id` and `recipient_user_id` (`missing_recipient_team_id`,
  `missing_recipient_user_id`).
- At most 12,000 characters of markdown per call, `markdown_text` and markdown chunks
  together (`msg_too_long`); chunks other than markdown_text, task_update and
  plan_update are `invalid_chunks`; an append with no text is `invalid_arguments`.
- appendStream and stopStream: an unknown `ts` is `message_not_found`; a message that is
  not a stream, or whose stream was stopped, is `message_not_in_streaming_state`.
- stopStream's `blocks` follow the message rules and show below the streamed text;
  `chat.update` then replaces the whole message.
- `FakeSlack.refuse_streaming = "not_allowed"` (or `method_deprecated`...) makes every
  stream method fail with that code, as a workspace without the feature does.

Every change to a bot message (post, update, stream calls) records a `View`: when, which
message, and the text shown (the streamed markdown, then block texts, else `text`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tests.servers.slack_checks import BOT_ID, BOT_USER_ID, SlackError, check_blocks

if TYPE_CHECKING:
    from tests.servers.slack_fake import FakeSlack

MAX_MARKDOWN = 12_000
_CHUNK_TYPES = {"markdown_text", "task_update", "plan_update"}


@dataclass(frozen=True)
class View:
    at: float  # time.monotonic() when the change was made
    method: str
    channel: str
    ts: str
    text: str  # what a person sees of the message now


def visible(msg: dict[str, Any]) -> str:
    """The text a person sees: streamed markdown, then blocks; `text` when neither."""
    parts: list[str] = []
    if msg.get("stream") is not None:
        parts.append(str(msg["stream"]))
    blocks = msg.get("blocks") or []
    parts.extend(_block_texts(blocks))
    if not parts:
        parts.append(str(msg.get("text") or ""))
    return "\n".join(parts)


def _block_texts(blocks: list[Any]) -> list[str]:
    out: list[str] = []
    for block in blocks:
        text = block.get("text")
        if isinstance(text, dict):
            out.append(str(text.get("text", "")))
        for element in block.get("elements") or []:
            inner = element.get("text")
            out.append(str(inner.get("text", "")) if isinstance(inner, dict) else str(inner or ""))
    return out


def record_view(fake: FakeSlack, method: str, channel: str, msg: dict[str, Any]) -> None:
    fake.views.append(View(time.monotonic(), method, channel, str(msg["ts"]), visible(msg)))


def _refused(fake: FakeSlack) -> None:
    if fake.refuse_streaming:
        raise SlackError(fake.refuse_streaming)


def _markdown(params: dict[str, Any]) -> str:
    """The markdown a call adds: `markdown_text` and markdown chunks, checked."""
    chunks = params.get("chunks") or []
    if isinstance(chunks, str):
        chunks = json.loads(chunks)
    if not isinstance(chunks, list):
        raise SlackError("invalid_chunks")
    text = str(params.get("markdown_text") or "")
    for chunk in chunks:
        if not isinstance(chunk, dict) or chunk.get("type") not in _CHUNK_TYPES:
            raise SlackError("invalid_chunks")
        if chunk["type"] == "markdown_text":
            if not isinstance(chunk.get("text"), str):
                raise SlackError("invalid_chunks")
            text += chunk["text"]
    if len(text) > MAX_MARKDOWN:
        raise SlackError("msg_too_long")
    return text


def _is_dm(fake: FakeSlack, channel: str) -> bool:
    conversation = fake.conversations.get(channel)
    if conversation is not None:
        return bool(conversation.get("is_im"))
    return channel.startswith("D")


def _live(fake: FakeSlack, params: dict[str, Any]) -> dict[str, Any]:
    fake._channel(params)
    ts = str(params.get("ts") or "")
    if not ts:
        raise SlackError("invalid_arguments")
    msg = fake._find(str(params["channel"]), ts)  # message_not_found
    if not msg.get("streaming"):
        raise SlackError("message_not_in_streaming_state")
    return msg


def start_stream(fake: FakeSlack, params: dict[str, Any]) -> dict[str, Any]:
    _refused(fake)
    history = fake._channel(params)
    channel = str(params["channel"])
    thread_ts = str(params.get("thread_ts") or "")
    if not thread_ts:
        raise SlackError("invalid_arguments")
    if not _is_dm(fake, channel):
        if not params.get("recipient_team_id"):
            raise SlackError("missing_recipient_team_id")
        if not params.get("recipient_user_id"):
            raise SlackError("missing_recipient_user_id")
    text = _markdown(params)
    fake._require_parent(channel, thread_ts)
    msg: dict[str, Any] = {"type": "message", "user": BOT_USER_ID, "bot_id": BOT_ID}
    msg.update(ts=fake.next_ts(), text=text, stream=text, blocks=None, thread_ts=thread_ts)
    msg["streaming"] = True
    history.append(msg)
    record_view(fake, "chat.startStream", channel, msg)
    return {"channel": channel, "ts": msg["ts"]}


def append_stream(fake: FakeSlack, params: dict[str, Any]) -> dict[str, Any]:
    _refused(fake)
    msg = _live(fake, params)
    text = _markdown(params)
    if not text:
        raise SlackError("invalid_arguments")
    msg["stream"] += text
    msg["text"] = msg["stream"]
    record_view(fake, "chat.appendStream", str(params["channel"]), msg)
    return {"channel": params["channel"], "ts": msg["ts"]}


def stop_stream(fake: FakeSlack, params: dict[str, Any]) -> dict[str, Any]:
    _refused(fake)
    msg = _live(fake, params)
    text = _markdown(params)
    blocks = params.get("blocks")
    if isinstance(blocks, str):
        blocks = json.loads(blocks)
    if blocks is not None:
        check_blocks(blocks)
    msg["stream"] += text
    msg.update(text=msg["stream"], blocks=blocks or None, streaming=False)
    record_view(fake, "chat.stopStream", str(params["channel"]), msg)
    return {"channel": params["channel"], "ts": msg["ts"], "message": dict(msg)}


STREAM_METHODS: dict[str, Callable[[FakeSlack, dict[str, Any]], dict[str, Any]]] = {
    "chat.startStream": start_stream,
    "chat.appendStream": append_stream,
    "chat.stopStream": stop_stream,
}
