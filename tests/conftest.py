from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.gitrepo import GIT_ENV, GitRepo
from tests.support.postgres import database_url, postgres, postgres_server

__all__ = ["database_url", "postgres", "postgres_server"]  # fixtures for every test


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No test sees the developer's keys, config or data directory."""
    for name in list(os.environ):
        if name.startswith(
            ("OPENAI_", "PINECONE_", "SLACK_", "DISCORD_", "CODECITE_", "GITHUB_")
        ) or (name == "DATABASE_URL"):
            monkeypatch.delenv(name, raising=False)
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("CODECITE_HOME", str(tmp_path / "home"))
    yield


@pytest.fixture
def make_repo(tmp_path: Path) -> Iterator[object]:
    counter = iter(range(1000))

    def factory(name: str | None = None, branch: str = "main") -> GitRepo:
        return GitRepo(tmp_path / (name or f"repo{next(counter)}"), branch=branch)

    yield factory


@pytest.fixture(autouse=True)
def _cores_closed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every Core a test builds is closed when the test ends, whatever the test forgot.

    Its queue, stores and clients would otherwise outlive the test (threads, open
    SQLite files, sockets) and leak into the next one. Closing twice is harmless.
    """
    from bot.core import Core

    built: list[Core] = []
    init = Core.__init__

    def tracked(self: Core, *args: object, **kwargs: object) -> None:
        init(self, *args, **kwargs)  # type: ignore[arg-type]
        built.append(self)

    monkeypatch.setattr(Core, "__init__", tracked)
    yield
    for core in reversed(built):
        core.close()
