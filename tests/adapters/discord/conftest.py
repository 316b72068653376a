"""A real Core over two real git repositories, scoped by a real codecite.toml.

`demo` has a GitHub origin (answers carry permalinks); `billing` is visible
everywhere except the mapped channel. `llm` swaps extractive answers for the
fake OpenAI server, whose replies each test may script.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from adapters.sections import PLATFORM_SECTIONS
from bot.config import Settings, load_file_config
from bot.core import Core
from tests.adapters.discord.gateway import ADMIN_ROLE_ID, MAPPED_CHANNEL, THREAD_CHANNEL
from tests.servers.openai_fake import FakeOpenAI
from tests.support.gitrepo import git
from tests.support.snippets import LEDGER_PY
from tests.support.snippets import WEBHOOK_RETRY_PY as HOOKS_PY


@pytest.fixture
def repos(make_repo: Callable[..., Any]) -> dict[str, Any]:
    demo = make_repo("demo")
    demo.write("src/hooks.py", HOOKS_PY)
    demo.commit("hooks")
    git(demo.path, "remote", "add", "origin", "https://github.com/acme/demo.git")
    billing = make_repo("billing")
    billing.write("billing/ledger.py", LEDGER_PY)
    billing.commit("ledger")
    return {"demo": demo, "billing": billing}


@pytest.fixture
def config_path(tmp_path: Path) -> Path:
    path = tmp_path / "codecite.toml"
    path.write_text(
        f'[channels."{MAPPED_CHANNEL}"]\n'
        'repos = ["demo"]\n'
        f'[channels."{THREAD_CHANNEL}"]\n'
        'repos = ["demo", "billing"]\n'
        "reply_in_thread = true\n"
        "[discord]\n"
        f'admin_role = "{ADMIN_ROLE_ID}"\n',
        encoding="utf-8",
    )
    return path


def build_core(repos: dict[str, Any], config_path: Path) -> Core:
    config = load_file_config(config_path, PLATFORM_SECTIONS)
    core = Core.from_settings(Settings(), config, platform_sections=PLATFORM_SECTIONS)
    for name, repo in repos.items():
        core.index_repo(str(repo.path), name=name)
    return core


@pytest.fixture
def core(repos: dict[str, Any], config_path: Path) -> Iterator[Core]:
    core = build_core(repos, config_path)
    yield core
    core.close()


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        monkeypatch.setenv("CODECITE_EMBED_MODEL", "none")
        monkeypatch.setenv("CODECITE_ANSWER_MAX_TOKENS", "4000")
        yield fake


@pytest.fixture
def llm_core(llm: FakeOpenAI, repos: dict[str, Any], config_path: Path) -> Iterator[Core]:
    core = build_core(repos, config_path)
    yield core
    core.close()
