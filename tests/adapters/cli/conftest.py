"""Shared fixtures of the terminal's tests: the fake model, and the shop repository indexed
by `codecite index` in a data directory of the test's own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.servers.openai_fake import FakeOpenAI
from tests.support.cli import run_cli
from tests.support.gitrepo import GitRepo
from tests.support.shop import build_shop
from tests.support.streaming import use_model


@pytest.fixture
def fake(request: pytest.FixtureRequest) -> Iterator[FakeOpenAI]:
    """The fake model; it answers the test module's `ANSWER`."""
    with FakeOpenAI() as server:
        answer = request.module.ANSWER
        server.chat_reply = lambda body: answer
        yield server


@pytest.fixture
def env(fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """`codecite` answers with `fake` (run_cli passes the environment on)."""
    return use_model(fake, monkeypatch)


@pytest.fixture
def indexed_shop(tmp_path: Path, make_repo: Any, env: dict[str, str]) -> tuple[Path, GitRepo]:
    """The data directory, after `codecite index` of the shop repository; and the repository."""
    repo: GitRepo = make_repo("shop")
    build_shop(repo)
    home = tmp_path / "home"
    result = run_cli(home, "index", str(repo.path))
    assert result.returncode == 0, result.stderr
    return home, repo
