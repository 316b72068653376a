"""Gateway event payloads as Discord sends them (GUILD_CREATE, MESSAGE_CREATE, INTERACTION_CREATE).

Tests deliver them through the client's connection state instead of a
websocket (`parse_*` hooks, private in discord.py; the version is pinned).
"""

from __future__ import annotations

import secrets
from typing import Any

from tests.servers.discord_fake import APP_ID, BOT_ID
from tests.servers.discord_wire import text_channel_payload, user_payload

GUILD_ID = 1_300_000_000_000_000_001
ADMIN_ROLE_ID = 1_300_000_000_000_000_002
MEMBER_ROLE_ID = 1_300_000_000_000_000_003
MAPPED_CHANNEL = 1_300_000_000_000_000_010  # mapped to one repository in codecite.toml
OPEN_CHANNEL = 1_300_000_000_000_000_011  # not mapped: every repository
THREAD_CHANNEL = 1_300_000_000_000_000_012  # reply_in_thread = true
ALICE = user_payload(1_300_000_000_000_000_100, "alice")
BOB = user_payload(1_300_000_000_000_000_101, "bob")
EVERYONE_PERMISSIONS = "2248473465835073"


def role_payload(role_id: int, name: str, position: int) -> dict[str, Any]:
    return {
        "id": str(role_id),
        "name": name,
        "color": 0,
        "hoist": False,
        "position": position,
        "permissions": EVERYONE_PERMISSIONS,
        "managed": False,
        "mentionable": False,
        "flags": 0,
    }


def guild_channels() -> list[dict[str, Any]]:
    return [
        text_channel_payload(MAPPED_CHANNEL, GUILD_ID, "backend"),
        text_channel_payload(OPEN_CHANNEL, GUILD_ID, "general"),
        text_channel_payload(THREAD_CHANNEL, GUILD_ID, "questions"),
    ]


def guild_create(threads: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "id": str(GUILD_ID),
        "name": "acme",
        "icon": None,
        "owner_id": str(BOB["id"]),
        "unavailable": False,
        "member_count": 3,
        "roles": [
            role_payload(GUILD_ID, "@everyone", 0),  # the default role shares the guild id
            role_payload(ADMIN_ROLE_ID, "codecite-admins", 2),
            role_payload(MEMBER_ROLE_ID, "engineers", 1),
        ],
        "channels": guild_channels(),
        "threads": threads or [],
        "members": [],
        "emojis": [],
        "stickers": [],
        "features": [],
        "voice_states": [],
        "presences": [],
        "stage_instances": [],
        "guild_scheduled_events": [],
    }


def member_payload(user: dict[str, Any], roles: list[int]) -> dict[str, Any]:
    return {
        "user": user,
        "roles": [str(r) for r in roles],
        "joined_at": "2024-01-01T00:00:00+00:00",
        "deaf": False,
        "mute": False,
        "flags": 0,
        "nick": None,
        "avatar": None,
        "premium_since": None,
        "pending": False,
        "permissions": EVERYONE_PERMISSIONS,
    }


def message_create(
    message_id: int,
    channel_id: int,
    content: str,
    *,
    author: dict[str, Any] = ALICE,
    guild_id: int | None = GUILD_ID,
    mentions: list[dict[str, Any]] | None = None,
    roles: list[int] | None = None,
    msg_type: int = 0,
) -> dict[str, Any]:
    """A MESSAGE_CREATE. Without Message Content, Discord blanks `content` unless mentioned."""
    message: dict[str, Any] = {
        "id": str(message_id),
        "channel_id": str(channel_id),
        "author": author,
        "content": content,
        "timestamp": "2024-05-01T12:00:00+00:00",
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": False,
        "mentions": mentions or [],
        "mention_roles": [],
        "attachments": [],
        "embeds": [],
        "pinned": False,
        "type": msg_type,
        "flags": 0,
        "components": [],
    }
    if guild_id is not None:
        message["guild_id"] = str(guild_id)
        member = member_payload(author, roles or [])
        del member["user"]  # MESSAGE_CREATE carries the member without its user
        message["member"] = member
    return message


def bot_user() -> dict[str, Any]:
    return user_payload(BOT_ID, "codecite", bot=True)


def mention(text: str) -> str:
    return f"<@{BOT_ID}> {text}"


def slash_interaction(
    interaction_id: int,
    name: str,
    options: dict[str, str] | None = None,
    *,
    channel: dict[str, Any],
    user: dict[str, Any] = ALICE,
    roles: list[int] | None = None,
    guild_id: int | None = GUILD_ID,
    guild_command: bool = False,
) -> dict[str, Any]:
    data: dict[str, Any] = {"id": str(interaction_id + 1), "name": name, "type": 1}
    if guild_command:
        data["guild_id"] = str(guild_id)  # the command was registered for this guild
    if options:
        data["options"] = [{"name": k, "type": 3, "value": v} for k, v in options.items()]
    return _interaction(interaction_id, 2, data, channel, user, roles or [], guild_id)


def button_interaction(
    interaction_id: int,
    custom_id: str,
    message: dict[str, Any],
    *,
    channel: dict[str, Any],
    user: dict[str, Any] = ALICE,
) -> dict[str, Any]:
    data = {"custom_id": custom_id, "component_type": 2}
    payload = _interaction(interaction_id, 3, data, channel, user, [], GUILD_ID)
    payload["message"] = message
    return payload


def _interaction(
    interaction_id: int,
    kind: int,
    data: dict[str, Any],
    channel: dict[str, Any],
    user: dict[str, Any],
    roles: list[int],
    guild_id: int | None,
) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "id": str(interaction_id),
        "application_id": str(APP_ID),
        "type": kind,
        "token": "itoken-" + secrets.token_hex(8),
        "version": 1,
        "data": data,
        "channel_id": channel["id"],
        "channel": channel,
        "app_permissions": EVERYONE_PERMISSIONS,
        "locale": "en-US",
        "entitlements": [],
        "attachment_size_limit": 8_388_608,
    }
    if guild_id is None:
        payload.update(user=user, context=1, authorizing_integration_owners={"0": "0"})
    else:
        payload.update(
            guild_id=str(guild_id),
            guild_locale="en-US",
            member=member_payload(user, roles),
            context=0,
            authorizing_integration_owners={"0": str(guild_id)},
        )
    return payload
