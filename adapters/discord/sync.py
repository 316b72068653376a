"""Register application commands with Discord only when they change.

`tree.sync()` replaces every command of a target (global, or one guild) and is
rate limited, so a restart must not repeat it: we keep a hash of each target's
payload (`stores.command_hashes`, in SQLite homes `discord-commands.json`) and
skip targets whose payload is unchanged.
With guild ids configured, commands are registered per guild (available at
once) and the global list is emptied; guilds dropped from the config are
emptied too.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import discord
from discord import app_commands

from bot.store.base import CommandHashes
from bot.store.command_hashes import JsonCommandHashes

log = logging.getLogger(__name__)

STATE_NAME = "discord-commands"  # the store's name: `discord-commands.json` in a home
STATE_FILE = f"{STATE_NAME}.json"
WHAT = "Discord command list"
GLOBAL = "global"


def payload_hash(payload: Sequence[dict[str, Any]]) -> str:
    raw = json.dumps(list(payload), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def target_key(guild_id: int | None) -> str:
    return GLOBAL if guild_id is None else f"guild:{guild_id}"


def _guild_of(key: str) -> int | None:
    return None if key == GLOBAL else int(key.partition(":")[2])


class CommandSync:
    """Hash-guarded `tree.sync()` per target; hashes kept in a `CommandHashes` store (a data
    directory given instead: its `discord-commands.json`)."""

    def __init__(self, hashes: CommandHashes | Path) -> None:
        if isinstance(hashes, Path):
            hashes = JsonCommandHashes(hashes / STATE_FILE, WHAT)
        self._hashes = hashes

    def load(self, application_id: int) -> dict[str, str]:
        return self._hashes.get(str(application_id))

    def save(self, application_id: int, hashes: dict[str, str]) -> None:
        self._hashes.set(str(application_id), hashes)

    async def sync(
        self,
        tree: app_commands.CommandTree[Any],
        application_id: int,
        guild_ids: Sequence[int] = (),
    ) -> list[str]:
        """Sync every target whose payload changed; returns the keys synced."""
        if guild_ids:
            for gid in guild_ids:
                tree.copy_global_to(guild=discord.Object(gid))
            tree.clear_commands(guild=None)
        stored = self.load(application_id)
        wanted = {target_key(None), *(target_key(g) for g in guild_ids)}
        synced: list[str] = []
        for key in sorted(wanted | set(stored)):
            guild = _guild_of(key)
            target = None if guild is None else discord.Object(guild)
            payload = [cmd.to_dict(tree) for cmd in tree.get_commands(guild=target)]
            digest = payload_hash(payload)
            if stored.get(key) == digest:
                continue
            if not await _sync_one(tree, target, key):
                continue
            synced.append(key)
            if key in wanted:
                stored[key] = digest
            else:
                stored.pop(key, None)  # a guild dropped from the config, now emptied
            self.save(application_id, stored)
        if not synced:
            log.info("application commands unchanged; sync skipped")
        return synced


async def _sync_one(
    tree: app_commands.CommandTree[Any], target: discord.Object | None, key: str
) -> bool:
    try:
        commands = await tree.sync(guild=target)
    except discord.Forbidden:
        log.warning(
            "cannot register commands for %s: is the bot in that server, invited with the "
            "applications.commands scope?",
            key,
        )
        return False
    except discord.HTTPException as exc:
        log.warning("registering commands for %s failed (HTTP %s)", key, exc.status)
        return False
    log.info("registered %d application commands for %s", len(commands), key)
    return True
