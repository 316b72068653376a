"""What the fake Slack Web API refuses in any message: the shared rules and ids.

Kept apart from the server so the stream methods (`slack_stream_fake`) apply the
same rules as chat.postMessage.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

BOT_TOKEN = "xoxb-test-bot-token"
APP_TOKEN = "xapp-1-test-app-token"
TEAM_ID = "T0TEAM"
BOT_USER_ID = "UBOT0001"
BOT_ID = "BBOT0001"

MAX_BLOCKS = 50
MAX_SECTION_TEXT = 3000
MAX_TEXT = 40000
RESPONSE_URL_USES = 5
_BLOCK_TYPES = {"section", "context", "actions", "divider", "header", "image", "rich_text"}


class SlackError(Exception):
    """An `ok: false` answer with Slack's error code (and any fields Slack adds to it)."""

    def __init__(self, code: str, **extra: Any) -> None:
        super().__init__(code)
        self.code = code
        self.extra = extra


def check_message(params: dict[str, Any]) -> None:
    text = params.get("text")
    blocks = params.get("blocks")
    if isinstance(blocks, str):
        blocks = json.loads(blocks)
        params["blocks"] = blocks
    if not text and not blocks:
        raise SlackError("no_text")
    if text is not None and len(str(text)) > MAX_TEXT:
        raise SlackError("msg_too_long")
    if blocks is not None:
        check_blocks(blocks)


def check_blocks(blocks: Any) -> None:
    if not isinstance(blocks, list) or len(blocks) > MAX_BLOCKS:
        raise SlackError("invalid_blocks")
    ids = [b.get("block_id") for b in blocks if isinstance(b, dict) and b.get("block_id")]
    if len(ids) != len(set(ids)):
        raise SlackError("invalid_blocks")
    action_ids: list[str] = []
    for block in blocks:
        if not isinstance(block, dict) or block.get("type") not in _BLOCK_TYPES:
            raise SlackError("invalid_blocks")
        kind = block["type"]
        if kind == "section":
            _check_text(block.get("text"), MAX_SECTION_TEXT)
        elif kind == "header":
            _check_text(block.get("text"), 150, plain=True)
        elif kind == "context":
            elements = block.get("elements") or []
            if not 1 <= len(elements) <= 10:
                raise SlackError("invalid_blocks")
            for element in elements:
                _check_text(element, MAX_SECTION_TEXT)
        elif kind == "actions":
            action_ids.extend(_check_actions(block))
    if len(action_ids) != len(set(action_ids)):
        raise SlackError("invalid_blocks")


def _check_text(obj: Any, limit: int, *, plain: bool = False) -> None:
    allowed = ("plain_text",) if plain else ("plain_text", "mrkdwn")
    if not isinstance(obj, dict) or obj.get("type") not in allowed:
        raise SlackError("invalid_blocks")
    text = obj.get("text")
    if not isinstance(text, str) or not text or len(text) > limit:
        raise SlackError("invalid_blocks")


def _check_actions(block: dict[str, Any]) -> Iterator[str]:
    elements = block.get("elements") or []
    if not 1 <= len(elements) <= 25:
        raise SlackError("invalid_blocks")
    for element in elements:
        if element.get("type") != "button":
            raise SlackError("invalid_blocks")
        _check_text(element.get("text"), 75, plain=True)
        action_id = str(element.get("action_id") or "")
        if not action_id or len(action_id) > 255 or len(str(element.get("value", ""))) > 2000:
            raise SlackError("invalid_blocks")
        if element.get("style", "primary") not in ("primary", "danger"):
            raise SlackError("invalid_blocks")
        if "confirm" in element:
            _check_confirm(element["confirm"])
        yield action_id


def _check_confirm(dialog: Any) -> None:
    """A confirmation dialog object: its four texts within their limits, a known style."""
    if not isinstance(dialog, dict) or set(dialog) - {"title", "text", "confirm", "deny", "style"}:
        raise SlackError("invalid_blocks")
    _check_text(dialog.get("title"), 100, plain=True)
    _check_text(dialog.get("text"), 300)
    _check_text(dialog.get("confirm"), 30, plain=True)
    _check_text(dialog.get("deny"), 30, plain=True)
    if dialog.get("style", "primary") not in ("primary", "danger"):
        raise SlackError("invalid_blocks")
