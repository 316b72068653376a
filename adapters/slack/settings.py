"""Slack's own settings, from the environment (the variable names are the interface).

SLACK_BOT_TOKEN (Web API), SLACK_APP_TOKEN (Socket Mode), SLACK_SIGNING_SECRET
(HTTP mode) and CODECITE_SLACK_API_URL (a Web API base, e.g. a test server).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AliasChoices, Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.config import settings_error
from bot.errors import ConfigError


def _env(name: str) -> AliasChoices:
    return AliasChoices(name)


class SlackSettings(BaseSettings):
    model_config = SettingsConfigDict(extra="ignore", frozen=True)

    bot_token: Annotated[SecretStr | None, Field(validation_alias=_env("SLACK_BOT_TOKEN"))] = None
    app_token: Annotated[SecretStr | None, Field(validation_alias=_env("SLACK_APP_TOKEN"))] = None
    signing_secret: Annotated[
        SecretStr | None, Field(validation_alias=_env("SLACK_SIGNING_SECRET"))
    ] = None
    api_url: Annotated[str | None, Field(validation_alias=_env("CODECITE_SLACK_API_URL"))] = None

    def require_mode(self) -> None:
        """ConfigError unless a mode is set: Socket Mode (app token) or HTTP (signing secret)."""
        if self.app_token is None and self.signing_secret is None:
            raise ConfigError(
                "Set SLACK_APP_TOKEN for Socket Mode, or SLACK_SIGNING_SECRET for HTTP mode."
            )

    @classmethod
    def load(cls) -> SlackSettings:
        try:
            return cls()
        except ValidationError as exc:
            raise settings_error(exc, cls) from exc
