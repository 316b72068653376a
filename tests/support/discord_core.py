"""A Core over two small repositories with codecite.toml mapping Discord channels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from adapters.sections import PLATFORM_SECTIONS
from bot.config import Settings, load_file_config
from bot.core import Core


def build_core(repos: dict[str, Any], config_path: Path) -> Core:
    config = load_file_config(config_path, PLATFORM_SECTIONS)
    core = Core.from_settings(Settings(), config, platform_sections=PLATFORM_SECTIONS)
    for name, repo in repos.items():
        core.index_repo(str(repo.path), name=name)
    return core
