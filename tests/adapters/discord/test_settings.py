"""`[discord]` belongs to the Discord adapter: the core keeps it unparsed, the adapter checks it.

A typo stays an error: an unknown top-level table fails when the file is read,
an unknown key inside `[discord]` fails when the adapter reads its section
(a client cannot be built with it), and DISCORD_* variables are read by the
adapter's own settings.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.discord.client import CodeciteClient
from adapters.discord.settings import DiscordSettings, discord_config
from adapters.sections import PLATFORM_SECTIONS
from bot.config import FileConfig, Settings, load_file_config
from bot.core import Core
from bot.errors import ConfigError


def write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "codecite.toml"
    path.write_text(body, encoding="utf-8")
    return path


def test_a_misspelt_platform_table_is_an_error_when_the_file_is_read(tmp_path: Path) -> None:
    path = write(tmp_path, '[discrod]\nadmin_role = "1"\n')
    with pytest.raises(ConfigError) as err:
        load_file_config(path, PLATFORM_SECTIONS)
    assert "discrod" in err.value.user_message and "\n" not in err.value.user_message


def test_a_platform_table_nobody_declared_is_an_error(tmp_path: Path) -> None:
    """Without the adapters' declaration (a core alone), [discord] is as unknown as any key."""
    path = write(tmp_path, "[discord]\nguild_ids = [1]\n")
    with pytest.raises(ConfigError):
        load_file_config(path)
    assert load_file_config(path, PLATFORM_SECTIONS).platform_section("discord") == {
        "guild_ids": [1]
    }


def test_a_misspelt_key_inside_the_table_stops_the_discord_client(tmp_path: Path) -> None:
    path = write(tmp_path, '[discord]\nadmin_rol = "123"\n')
    config = load_file_config(path, PLATFORM_SECTIONS)
    core = Core.from_settings(Settings(), config, platform_sections=PLATFORM_SECTIONS)
    try:
        with pytest.raises(ConfigError) as err:
            CodeciteClient(core)
        assert "discord.admin_rol" in err.value.user_message
    finally:
        core.close()


def test_a_changed_table_is_a_changed_config(tmp_path: Path) -> None:
    """The scheduler re-reads codecite.toml and applies it when it differs: [discord] counts."""
    one = load_file_config(write(tmp_path, "[discord]\nguild_ids = [1]\n"), PLATFORM_SECTIONS)
    two = load_file_config(write(tmp_path, "[discord]\nguild_ids = [2]\n"), PLATFORM_SECTIONS)
    assert one != two and one != FileConfig()
    core = Core.from_settings(Settings(), one, platform_sections=PLATFORM_SECTIONS)
    try:
        assert discord_config(core).guild_ids == (1,)
        core.use_config(two)
        assert discord_config(core).guild_ids == (2,)
    finally:
        core.close()


def test_discord_variables_are_the_adapters_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISCORD_TOKEN", "token-abc")
    monkeypatch.setenv("CODECITE_DISCORD_MESSAGE_CONTENT", "1")
    monkeypatch.setenv("CODECITE_DISCORD_API_URL", "http://127.0.0.1:9/api/v10")
    settings = DiscordSettings.load()
    assert settings.token is not None and settings.token.get_secret_value() == "token-abc"
    assert settings.message_content and settings.api_url == "http://127.0.0.1:9/api/v10"
    assert not hasattr(Settings(), "discord_token")  # the core's settings know no platform
