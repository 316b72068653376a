"""What the entry points must know of the chat adapters without importing them.

`PLATFORM_SECTIONS`: the codecite.toml tables that belong to chat adapters
rather than to the core. `PLATFORM_SECRETS`: the environment variables holding
their tokens, which the log redacts.

The entry point hands the section names to the config loader: each table is kept for
its adapter (which validates its keys), and any other unknown key stays an error.
A new platform with a table of its own adds its name here; nothing in `bot/` changes.
"""

from __future__ import annotations

PLATFORM_SECTIONS: tuple[str, ...] = ("discord",)
PLATFORM_SECRETS: tuple[str, ...] = (
    "SLACK_BOT_TOKEN",
    "SLACK_APP_TOKEN",
    "SLACK_SIGNING_SECRET",
    "DISCORD_TOKEN",
)
