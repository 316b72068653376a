"""A fixture for tests that open sources: no global git config, a fresh verdict memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.ingest import git_source
from bot.ingest.filters import VerdictMemo


@pytest.fixture(autouse=True)
def _isolated_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-global-gitconfig"))
    # Verdicts are remembered per process; each test starts from a clean memory.
    monkeypatch.setattr(git_source, "MEMO", VerdictMemo(1000))
