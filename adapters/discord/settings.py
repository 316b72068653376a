"""Discord's own settings: token and switches from the environment, `[discord]` from the toml.

    settings = DiscordSettings.load()       # DISCORD_TOKEN, CODECITE_DISCORD_API_URL, ...
    config = discord_config(core)           # codecite.toml's [discord], validated strictly

`SECTION` is declared to the config loader by the entry point, so `[discord]`
passes the core's strict check and a typo anywhere else still fails at start;
the table's own keys are checked here, when the adapter starts (and by
`discord_config` wherever it is read).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.config import settings_error
from bot.core import Core
from bot.errors import ConfigError

SECTION = "discord"


class DiscordSettings(BaseSettings):
    """Environment settings of the Discord adapter (the variable names are the interface)."""

    model_config = SettingsConfigDict(extra="ignore", frozen=True)

    token: Annotated[SecretStr | None, Field(validation_alias=AliasChoices("DISCORD_TOKEN"))] = None
    message_content: Annotated[
        bool, Field(validation_alias=AliasChoices("CODECITE_DISCORD_MESSAGE_CONTENT"))
    ] = False
    api_url: Annotated[
        str | None, Field(validation_alias=AliasChoices("CODECITE_DISCORD_API_URL"))
    ] = None

    @classmethod
    def load(cls) -> DiscordSettings:
        try:
            return cls()
        except ValidationError as exc:
            raise settings_error(exc, cls) from exc


class DiscordConfig(BaseModel):
    """`admin_role` is a role id: it counts only in the servers listed in `guild_ids`.

    Role names are refused: anyone can create a role with any name in a server of
    their own. Without `guild_ids` no role grants anything (only `admins` do).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    guild_ids: tuple[int, ...] = ()
    admin_role: str = ""

    @field_validator("admin_role", mode="before")
    @classmethod
    def _role_id(cls, value: object) -> object:
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)  # `admin_role = 987654321098765432` is fine too
        if isinstance(value, str) and value.strip() and not value.strip().isdigit():
            raise ValueError(
                "must be a role id (Server Settings > Roles > right-click > Copy Role ID), "
                "not a role name"
            )
        return value.strip() if isinstance(value, str) else value


def parse_discord_config(table: object, where: str = "codecite.toml") -> DiscordConfig:
    """`[discord]` validated; a mistake is one line naming the key (`discord.admin_role`)."""
    try:
        return DiscordConfig.model_validate(table)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(p) for p in (SECTION, *first.get("loc", ())))
        raise ConfigError(f"{where}: {key}: {first.get('msg', 'invalid')}") from exc


def discord_config(core: Core) -> DiscordConfig:
    """The `[discord]` table of the configuration the core answers by."""
    where = core.settings.resolved_config_path()
    return parse_discord_config(core.platform_section(SECTION), str(where or "codecite.toml"))
