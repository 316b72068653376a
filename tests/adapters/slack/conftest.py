"""A real Core over real git repositories, the real Bolt app over HTTP, a strict fake Slack."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.answer.streaming import AnswerStream
from bot.config import FileConfig, Settings, load_file_config
from bot.core import Context, Core
from bot.models import Answer
from tests.servers.slack_fake import BOT_TOKEN, FakeSlack
from tests.support.gitrepo import GitRepo
from tests.support.slack_driver import (
    BILLING_PY,
    CHANNEL,
    SIGNING_SECRET,
    Driver,
    Recorded,
    Running,
    _run,
)
from tests.support.snippets import WEBHOOK_RETRY_PY as APP_PY


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        # The conversations these tests use (conversations.info knows nothing else).
        for channel in (CHANNEL, "C0SHOP", "C0NOTHREADS", "C0PRIVATE"):
            fake.add_conversation(channel, "public")
        fake.add_conversation("D0DM", "im")
        yield fake


@pytest.fixture
def config_toml(tmp_path: Path) -> Path:
    path = tmp_path / "codecite.toml"
    path.write_text(
        'admins = ["UADMIN"]\n'
        "[channels.C0SHOP]\n"
        'repos = ["shop"]\n'
        "[channels.C0NOTHREADS]\n"
        'repos = ["shop", "billing"]\n'
        "threads = false\n",
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="session")
def indexed_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two real repositories indexed once; each test starts from a copy of this data directory."""
    root = tmp_path_factory.mktemp("slack-index")
    shop = GitRepo(root / "shop")  # git identity comes from GIT_ENV inside GitRepo
    shop.write("shop/webhooks.py", APP_PY)
    shop.commit("webhooks")
    billing = GitRepo(root / "billing")
    billing.write("billing/discounts.py", BILLING_PY)
    billing.commit("discounts")
    home = root / "home"
    # Init arguments beat the environment: no model, no embeddings, whatever the shell has.
    settings = Settings(  # type: ignore[call-arg]
        CODECITE_HOME=home, OPENAI_API_KEY=None, OPENAI_BASE_URL=None, CODECITE_INDEX="local"
    )
    core = Core.from_settings(settings, FileConfig())
    core.index_repo(str(shop.path), name="shop")
    core.index_repo(str(billing.path), name="billing")
    core.close()
    return home


@pytest.fixture
def core(
    slack: FakeSlack, config_toml: Path, indexed_home: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Core]:
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("SLACK_SIGNING_SECRET", SIGNING_SECRET)
    monkeypatch.setenv("CODECITE_SLACK_API_URL", slack.base_url)
    monkeypatch.setenv("CODECITE_CONFIG", str(config_toml))
    settings = Settings()
    shutil.copytree(indexed_home, settings.home)
    core = Core.from_settings(settings, load_file_config(config_toml))
    yield core
    core.close()


@pytest.fixture
def recorded(core: Core, monkeypatch: pytest.MonkeyPatch) -> Recorded:
    """Wrap `core.ask` and `core.ask_stream` to record their arguments and answers (the
    real ones still run)."""
    log = Recorded()
    real_ask, real_stream = core.ask, core.ask_stream

    def ask(text: str, ctx: Context, conversation: Any = ()) -> Answer:
        log.asks.append((text, ctx, tuple(conversation)))
        answer = real_ask(text, ctx, conversation)
        log.answers.append(answer)
        return answer

    def ask_stream(text: str, ctx: Context, conversation: Any = ()) -> AnswerStream:
        log.asks.append((text, ctx, tuple(conversation)))

        def keep(answer: Answer) -> Answer:
            log.answers.append(answer)
            return answer

        return real_stream(text, ctx, conversation).then(keep)

    monkeypatch.setattr(core, "ask", ask)
    monkeypatch.setattr(core, "ask_stream", ask_stream)
    return log


@pytest.fixture
def running(core: Core) -> Iterator[Running]:
    run = _run(core)
    yield run
    run.server.stop()
    run.bot.close()


@pytest.fixture
def start_app(core: Core) -> Iterator[Callable[[], Running]]:
    """Start extra app instances (same CODECITE_HOME), stopped at teardown."""
    started: list[Running] = []

    def start() -> Running:
        started.append(_run(core))
        return started[-1]

    yield start
    for run in started:
        run.server.stop()
        run.bot.close()


@pytest.fixture
def driver(slack: FakeSlack, running: Running) -> Driver:
    return Driver(slack, running.server.url())
