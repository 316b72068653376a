"""The fake Slack's AI-app pane: `assistant.threads.*`, assistant threads and message metadata.

Registered into `FakeSlack`'s method table (see `_pane` there), strict as Slack's
reference pages say:
- `assistant.threads.setStatus` needs `channel_id`, `thread_ts` and `status` ("" clears it),
  at most 10 `loading_messages`; the thread must exist (`invalid_thread_ts`). The status
  shows until the bot next posts in that thread (`status_shown`), as Slack clears it.
- `assistant.threads.setTitle` needs `channel_id`, `thread_ts` and a `title`; the thread
  must be an assistant thread (its parent has subtype `assistant_app_thread`).
- `assistant.threads.setSuggestedPrompts` needs `channel_id` and 1 to 4 `prompts`, each
  with a `title` and a `message`; a `thread_ts`, when given, must be an assistant thread.
Unknown channels are `channel_not_found`; a missing argument is `invalid_arguments`.

Message metadata (`chat.postMessage`/`chat.update` `metadata`, Bolt's default thread
context store) must be `{"event_type": str, "event_payload": object}`
(`invalid_metadata_format` otherwise) and is listed by `conversations.replies` only with
`include_all_metadata`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.servers.slack_fake import FakeSlack

ASSISTANT_SUBTYPE = "assistant_app_thread"
MAX_PROMPTS = 4
MAX_LOADING_MESSAGES = 10


def _error(code: str) -> Exception:
    from tests.servers.slack_fake import SlackError  # that module imports this one lazily

    return SlackError(code)


def start_thread(fake: FakeSlack, channel: str, user: str) -> str:
    """What Slack does when someone opens the pane: a thread parent in the app's DM."""
    msg = fake.add_message(channel, user, "New Assistant Thread")
    stored = _message(fake, channel, msg["ts"])
    stored.update(
        subtype=ASSISTANT_SUBTYPE,
        thread_ts=msg["ts"],
        assistant_app_thread={"title": "", "title_blocks": [], "artifacts": []},
    )
    return str(msg["ts"])


def thread_title(fake: FakeSlack, channel: str, thread_ts: str) -> str:
    parent = _message(fake, channel, thread_ts)
    return str((parent.get("assistant_app_thread") or {}).get("title") or "")


def status_shown(fake: FakeSlack, channel: str, thread_ts: str) -> str:
    """The status the user sees now: the last one set, unless the bot posted since."""
    shown = ""
    for call in list(fake.calls):
        if not call.ok:
            continue
        where = (call.params.get("channel_id"), call.params.get("thread_ts"))
        if call.method == "assistant.threads.setStatus" and where == (channel, thread_ts):
            shown = str(call.params.get("status") or "")
        posted = (call.params.get("channel"), call.params.get("thread_ts"))
        if call.method == "chat.postMessage" and posted == (channel, thread_ts):
            shown = ""
    return shown


def metadata_of(params: dict[str, Any]) -> dict[str, Any]:
    """The `metadata` field to store with a message ({} when none was sent)."""
    raw = params.get("metadata")
    if raw is None:
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raise _error("invalid_metadata_format") from None
    if (
        not isinstance(raw, dict)
        or not isinstance(raw.get("event_type"), str)
        or not raw["event_type"]
        or not isinstance(raw.get("event_payload"), dict)
    ):
        raise _error("invalid_metadata_format")
    return {"metadata": {"event_type": raw["event_type"], "event_payload": raw["event_payload"]}}


def as_listed(message: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    """A stored message as conversations.replies lists it (metadata on request only)."""
    listed = dict(message)
    if str(params.get("include_all_metadata")).lower() not in ("true", "1"):
        listed.pop("metadata", None)
    return listed


def _message(fake: FakeSlack, channel: str, ts: str) -> dict[str, Any]:
    for msg in fake.messages.get(channel, []):
        if msg["ts"] == ts:
            return msg
    raise _error("invalid_thread_ts")


def _thread(fake: FakeSlack, params: dict[str, Any], *, assistant: bool) -> dict[str, Any]:
    channel = str(params.get("channel_id") or "")
    if not channel or channel not in fake.messages:
        raise _error("channel_not_found")
    ts = str(params.get("thread_ts") or "")
    if not ts:
        raise _error("invalid_arguments")
    parent = _message(fake, channel, ts)
    if assistant and parent.get("subtype") != ASSISTANT_SUBTYPE:
        raise _error("invalid_thread_ts")
    return parent


def set_status(fake: FakeSlack, params: dict[str, Any]) -> dict[str, Any]:
    _thread(fake, params, assistant=False)
    if not isinstance(params.get("status"), str):
        raise _error("invalid_arguments")
    loading = params.get("loading_messages")
    if loading is not None and (
        not isinstance(loading, list) or len(loading) > MAX_LOADING_MESSAGES
    ):
        raise _error("invalid_arguments")
    return {}


def set_title(fake: FakeSlack, params: dict[str, Any]) -> dict[str, Any]:
    parent = _thread(fake, params, assistant=True)
    title = params.get("title")
    if not isinstance(title, str) or not title.strip():
        raise _error("invalid_arguments")
    parent["assistant_app_thread"]["title"] = title
    return {}


def set_suggested_prompts(fake: FakeSlack, params: dict[str, Any]) -> dict[str, Any]:
    channel = str(params.get("channel_id") or "")
    if not channel or channel not in fake.messages:
        raise _error("channel_not_found")
    if params.get("thread_ts"):
        _thread(fake, params, assistant=True)
    prompts = params.get("prompts")
    if isinstance(prompts, str):
        prompts = json.loads(prompts)
    if not isinstance(prompts, list) or not 1 <= len(prompts) <= MAX_PROMPTS:
        raise _error("invalid_arguments")
    for prompt in prompts:
        if not isinstance(prompt, dict) or set(prompt) - {"title", "message"}:
            raise _error("invalid_arguments")
        if not all(isinstance(prompt.get(k), str) and prompt[k] for k in ("title", "message")):
            raise _error("invalid_arguments")
    title = params.get("title")
    if title is not None and not isinstance(title, str):
        raise _error("invalid_arguments")
    return {}


METHODS: dict[str, Callable[[FakeSlack, dict[str, Any]], dict[str, Any]]] = {
    "assistant.threads.setStatus": set_status,
    "assistant.threads.setTitle": set_title,
    "assistant.threads.setSuggestedPrompts": set_suggested_prompts,
}
