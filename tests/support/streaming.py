"""Streamed answers under test: a Core whose model is the real client on the fake server,
and `codecite` run on a pseudo-terminal."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.config import FileConfig, Settings
from bot.core import Core
from bot.llm.openai_chat import OpenAIChat
from bot.wiring import make_index
from tests.servers.openai_fake import FakeOpenAI
from tests.support.cli import ROOT
from tests.support.gitrepo import GitRepo

KEY = "sk-test-stream-0123456789"


def streaming_core(fake: FakeOpenAI, repo: GitRepo, config: FileConfig | None = None) -> Core:
    """A Core over `repo` (indexed lexically) whose model is OpenAIChat on `fake`."""
    settings = Settings(
        OPENAI_API_KEY=KEY, OPENAI_BASE_URL=fake.base_url, CODECITE_EMBED_MODEL="none"
    )
    chat = OpenAIChat(settings.chat_model, api_key=KEY, base_url=fake.base_url, max_retries=0)
    core = Core(settings, config or FileConfig(), make_index(settings), llm=chat)
    core.index_repo(str(repo.path), name="shop")
    return core


def use_model(fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Point `codecite` (run by the test as a child process) at `fake` for answers; no
    embeddings. The variables set, for callers that pass an environment on themselves."""
    values = {
        "OPENAI_API_KEY": KEY,
        "OPENAI_BASE_URL": fake.base_url,
        "CODECITE_EMBED_MODEL": "none",
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


def each_char(text: str) -> list[str]:
    """A stream split: every character its own SSE chunk, so every prefix is seen."""
    return list(text)


def run_on_pty(
    home: Path, *args: str, env: dict[str, str], stdin: str = "", timeout: float = 60.0
) -> list[tuple[float, bytes]]:
    """Run `codecite` with its stdout on a pseudo-terminal (stdin piped from `stdin`);
    the output as (time, bytes) reads."""
    controller, terminal = pty.openpty()
    full_env = {**os.environ, **env, "CODECITE_HOME": str(home), "COLUMNS": "120"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "adapters.cli.main", *args],
        stdin=subprocess.PIPE,
        stdout=terminal,
        stderr=subprocess.PIPE,
        env=full_env,
        cwd=ROOT,
    )
    os.close(terminal)
    assert proc.stdin is not None
    proc.stdin.write(stdin.encode())
    proc.stdin.close()
    reads: list[tuple[float, bytes]] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([controller], [], [], 0.1)
            if ready:
                try:
                    data = os.read(controller, 4096)
                except OSError:  # the child closed the terminal
                    break
                if not data:
                    break
                reads.append((time.monotonic(), data))
            elif proc.poll() is not None:
                break
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(controller)
        if proc.stderr is not None:
            proc.stderr.close()
    return reads
