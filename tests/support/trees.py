"""A directory of files written out and indexed by a real Core (local index, no keys)."""

from __future__ import annotations

from pathlib import Path

from bot.config import Settings
from bot.core import Core


def index_files(tree: Path, files: dict[str, str], name: str = "proj") -> Core:
    """Write `files` (relative path -> text) under `tree` and index it as `name`."""
    for rel, text in files.items():
        path = tree / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    core = Core.from_settings(Settings())
    core.index_repo(str(tree), name=name)
    return core
