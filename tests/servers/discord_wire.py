"""Discord's wire rules and payload shapes, shared by the fake API and the tests.

What Discord rejects (message content over 2,000 characters, empty messages,
unknown flags, malformed components or allowed_mentions, bad command names)
and what its objects look like (users, channels, threads), as plain dicts.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

MAX_CONTENT = 2000
EPHEMERAL, SUPPRESS_EMBEDS, SUPPRESS_NOTIFICATIONS = 64, 4, 4096
COMMAND_NAME = re.compile(r"^[-_\w]{1,32}$")


class DiscordError(Exception):
    def __init__(self, status: int, code: int, message: str, errors: Any = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.errors = status, code, message, errors


def invalid(field_name: str, message: str) -> DiscordError:
    errors = {field_name: {"_errors": [{"code": "INVALID", "message": message}]}}
    return DiscordError(400, 50035, "Invalid Form Body", errors)


# -- validation ------------------------------------------------------------------------------


def check_message(body: dict[str, Any], *, allowed_flags: int) -> None:
    content = body.get("content")
    if content is not None and not isinstance(content, str):
        raise invalid("content", "must be a string")
    if content is not None and len(content) > MAX_CONTENT:
        raise DiscordError(
            400,
            50035,
            "Invalid Form Body",
            {"content": {"_errors": [{"code": "BASE_TYPE_MAX_LENGTH", "message": "2000"}]}},
        )
    if not content and not body.get("components") and not body.get("embeds"):
        raise DiscordError(400, 50006, "Cannot send an empty message")
    if body.get("flags", 0) & ~allowed_flags:
        raise invalid("flags", "unsupported message flags")
    _check_allowed_mentions(body.get("allowed_mentions"))
    _check_components(body.get("components", []))


def check_edit(body: dict[str, Any], message: dict[str, Any]) -> None:
    """An edit of `message`: the fields it sends follow the rules of a new message, and
    what it leaves must not be empty."""
    content = body.get("content")
    if content is not None and not isinstance(content, str):
        raise invalid("content", "must be a string")
    if content is not None and len(content) > MAX_CONTENT:
        raise DiscordError(
            400,
            50035,
            "Invalid Form Body",
            {"content": {"_errors": [{"code": "BASE_TYPE_MAX_LENGTH", "message": "2000"}]}},
        )
    after = {**message, **body}  # a field sent as null is removed
    if not after.get("content") and not after.get("components") and not after.get("embeds"):
        raise DiscordError(400, 50006, "Cannot send an empty message")
    _check_allowed_mentions(body.get("allowed_mentions"))
    _check_components(body.get("components") or [])


def _check_allowed_mentions(allowed: Any) -> None:
    if allowed is None:
        return
    parse = allowed.get("parse", [])
    if not set(parse) <= {"users", "roles", "everyone"}:
        raise invalid("allowed_mentions", "bad parse value")
    for kind in ("users", "roles"):
        if kind in parse and allowed.get(kind):
            raise invalid("allowed_mentions", f"parse {kind} conflicts with a {kind} list")


def _check_components(rows: list[dict[str, Any]]) -> None:
    if len(rows) > 5:
        raise invalid("components", "at most 5 action rows")
    ids: list[str] = []
    for row in rows:
        if row.get("type") != 1 or not 1 <= len(row.get("components", [])) <= 5:
            raise invalid("components", "action rows hold 1 to 5 components")
        for item in row["components"]:
            if item.get("type") != 2 or item.get("style") not in (1, 2, 3, 4, 5):
                raise invalid("components", "only buttons are expected")
            if len(item.get("label", "")) > 80:
                raise invalid("components", "button label over 80 characters")
            custom_id = item.get("custom_id", "")
            if item["style"] != 5 and not 1 <= len(custom_id) <= 100:
                raise invalid("components", "custom_id must be 1 to 100 characters")
            ids.append(custom_id)
    if len(ids) != len(set(ids)):
        raise invalid("components", "custom_ids must be unique in a message")


def would_ping_everyone(body: dict[str, Any]) -> bool:
    """What Discord would do: @everyone/@here pings unless allowed_mentions leaves them out."""
    allowed = body.get("allowed_mentions")
    permitted = allowed is None or "everyone" in allowed.get("parse", [])
    content = body.get("content") or ""
    return permitted and bool(re.search(r"@(everyone|here)", content))


# -- payload builders ------------------------------------------------------------------------


def user_payload(user_id: int, name: str, *, bot: bool = False) -> dict[str, Any]:
    user = {"id": str(user_id), "username": name, "discriminator": "0", "avatar": None}
    user["global_name"] = name
    if bot:
        user["bot"] = True
    return user


def text_channel_payload(channel_id: int, guild_id: int, name: str) -> dict[str, Any]:
    return {
        "id": str(channel_id),
        "type": 0,
        "guild_id": str(guild_id),
        "name": name,
        "position": 0,
        "permission_overwrites": [],
        "nsfw": False,
        "parent_id": None,
        "topic": None,
        "last_message_id": None,
        "rate_limit_per_user": 0,
    }


def dm_channel_payload(channel_id: int, recipient: dict[str, Any]) -> dict[str, Any]:
    return {"id": str(channel_id), "type": 1, "recipients": [recipient], "last_message_id": None}


def thread_payload(
    thread_id: int, guild_id: int, parent_id: int, *, owner_id: int, name: str
) -> dict[str, Any]:
    return {
        "id": str(thread_id),
        "type": 11,
        "guild_id": str(guild_id),
        "parent_id": str(parent_id),
        "owner_id": str(owner_id),
        "name": name,
        "last_message_id": None,
        "rate_limit_per_user": 0,
        "message_count": 0,
        "member_count": 1,
        "total_message_sent": 0,
        "flags": 0,
        "thread_metadata": {
            "archived": False,
            "auto_archive_duration": 1440,
            "archive_timestamp": now(),
            "locked": False,
            "create_timestamp": now(),
        },
    }


def now() -> str:
    return datetime.now(UTC).isoformat()
