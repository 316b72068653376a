"""Several codecite processes as a platform runs them: each with a data directory of its own,
all sharing one PostgreSQL database and one (fake) Pinecone index.

    deployment = Deployment(tmp_path, database_url, pinecone)
    scheduler = deployment.core("scheduler")     # its own CODECITE_HOME
    web = deployment.core("web")                 # another one, empty
    deployment.index(scheduler)                  # the scheduler's job, as APScheduler runs it
    answer = web.ask("where is compute_discount defined?", CLI)

The repository is a real git repository whose `origin` is a GitHub URL (never
contacted: codecite only reads it to build permalinks), so answers carry
`https://github.com/acme/shop/blob/<commit>/<path>#L<a>-L<b>` links a test can
check against the file's contents at that commit.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar

from apscheduler.schedulers.background import BackgroundScheduler

from adapters.schedule import IngestScheduler
from adapters.slack.app import build_bot
from adapters.slack.serve import start_http
from bot.config import Settings, load_file_config
from bot.core import Core
from bot.models import Answer, Citation
from tests.servers.openai_fake import FakeOpenAI
from tests.servers.pinecone_fake import FakePinecone
from tests.servers.slack_fake import BOT_TOKEN, FakeSlack
from tests.support.gitrepo import GitRepo, git
from tests.support.paths import ROOT
from tests.support.postgres import PostgresServer, find_binary, unavailable
from tests.support.slack_driver import SIGNING_SECRET, Driver

T = TypeVar("T")

REPO = "shop"
WEB_URL = "https://github.com/acme/shop"
DISCOUNTS = "shop/discounts.py"
CHECKOUT = "shop/checkout.py"

DISCOUNTS_PY = '''"""Discounts for large orders."""


def compute_volume_discount(total):
    """Orders over 10,000 get five per cent off."""
    if total > 10_000:
        return total * 0.05
    return 0
'''

CHECKOUT_PY = '''"""The checkout: totals, discounts, the charge."""

from shop.discounts import compute_volume_discount


def checkout_total(items):
    total = sum(item.price for item in items)
    return total - compute_volume_discount(total)
'''

# The second commit moves the function down by four lines: stale permalinks would show it.
DISCOUNTS_PY_V2 = '''"""Discounts for large orders."""

LIMIT = 10_000
RATE = 0.05
# Both figures come from the sales team's price list of March.


def compute_volume_discount(total):
    """Orders over LIMIT get RATE off."""
    if total > LIMIT:
        return total * RATE
    return 0
'''


def definition_lines(text: str, name: str) -> tuple[int, int]:
    """1-based first and last line of the top-level function `name` in `text`."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines, 1) if line.startswith(f"def {name}("))
    end = start
    for i in range(start, len(lines)):
        if lines[i].strip() and not lines[i].startswith((" ", "\t")):
            break
        if lines[i].strip():
            end = i + 1
    return start, end


def build_repo(path: Path) -> GitRepo:
    repo = GitRepo(path)
    git(path, "remote", "add", "origin", f"{WEB_URL}.git")
    repo.write(DISCOUNTS, DISCOUNTS_PY)
    repo.write(CHECKOUT, CHECKOUT_PY)
    repo.write("README.md", "# shop\n\nThe shop's checkout and its discounts.\n")
    repo.commit("shop")
    return repo


class Deployment:
    """The shared services and the repository; `core(name)` starts a process's Core."""

    def __init__(
        self,
        root: Path,
        database_url: str,
        pinecone: FakePinecone,
        *,
        openai: FakeOpenAI | None = None,
    ) -> None:
        self.root = root
        self.database_url = database_url
        self.pinecone = pinecone
        self.openai = openai  # None: extractive answers and lexical search
        self.repo = build_repo(root / "shop-src")
        self.config_path = root / "codecite.toml"
        self.config_path.write_text(
            'admins = ["UADMIN"]\n'
            "[schedule]\n"
            'interval = "1h"\n'
            "jitter_seconds = 0\n"
            f'[[repos]]\nname = "{REPO}"\npath = "{self.repo.path}"\n',
            encoding="utf-8",
        )
        self._schedulers: list[IngestScheduler] = []

    def home(self, name: str) -> Path:
        """The data directory of process `name` (not created: a fresh machine's is empty)."""
        return self.root / "homes" / name

    def env(self, name: str) -> dict[str, str]:
        """The environment the process `name` is given (as a platform would)."""
        return {
            "CODECITE_HOME": str(self.home(name)),
            "CODECITE_CONFIG": str(self.config_path),
            "CODECITE_DATABASE_URL": self.database_url,
            "CODECITE_INDEX": "pinecone",
            "PINECONE_API_KEY": self.pinecone.api_key,
            "PINECONE_HOST": self.pinecone.url,
            "CODECITE_EMBED_DIMENSIONS": "8",
        }

    def settings(self, name: str) -> Settings:
        # Init arguments beat the environment, whatever the shell has.
        model = (
            {"OPENAI_API_KEY": "sk-test-deploy", "OPENAI_BASE_URL": self.openai.base_url}
            if self.openai is not None
            else {"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None}
        )
        return Settings(**self.env(name), **model)  # type: ignore[arg-type]

    def core(self, name: str) -> Core:
        """A process's Core, built the way `codecite serve` builds it."""
        return Core.from_settings(self.settings(name), load_file_config(self.config_path))

    def scheduler(self, core: Core) -> IngestScheduler:
        """The scheduler process's jobs, installed and paused (a test runs them itself)."""
        sched = IngestScheduler(core, scheduler=BackgroundScheduler(timezone="UTC"))
        sched.install()
        sched.start(paused=True)
        self._schedulers.append(sched)
        return sched

    def close(self) -> None:
        for sched in self._schedulers:
            sched.shutdown()

    def cli(self, name: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """`codecite <args>` in a subprocess with process `name`'s environment."""
        return run_cli(self.env(name), *args, timeout=timeout)


def run_cli(
    extra: dict[str, str], *args: str, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODECITE_", "PINECONE_"))}
    env.pop("DATABASE_URL", None)
    env |= {"PYTHONPATH": str(ROOT), "COLUMNS": "300", **extra}  # one line a row
    return subprocess.run(
        [sys.executable, "-m", "adapters.cli.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def permalink_of(citation: Citation) -> tuple[str, str, int, int]:
    """(commit, path, start, end) read back from a GitHub permalink."""
    assert citation.url.startswith(f"{WEB_URL}/blob/"), citation.url
    rest, _, lines = citation.url.removeprefix(f"{WEB_URL}/blob/").partition("#")
    commit, _, path = rest.partition("/")
    first, _, last = lines.removeprefix("L").partition("-L")
    return commit, path, int(first), int(last or first)


def files_under(home: Path) -> list[str]:
    """Every file a process left in its data directory (relative paths, sorted)."""
    if not home.exists():
        return []
    return sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file())


def same_answer(a: Answer, b: Answer) -> bool:
    """What a user sees is the same: text, citations (with their links) and freshness."""
    return (a.text, a.citations, a.freshness) == (b.text, b.citations, b.freshness)


def commits_cited(answer: Answer) -> Iterator[str]:
    for citation in answer.citations:
        if citation.url:
            yield permalink_of(citation)[0]


def file_at(repo: GitRepo, commit: str, path: str) -> str:
    """A file's contents at `commit`, as the permalink's page would show them."""
    return git(repo.path, "show", f"{commit}:{path}") + "\n"


class SlackReplica:
    """One web process's Slack side: its own Core (own home) behind the real Bolt app over HTTP."""

    def __init__(self, deployment: Deployment, name: str, slack: FakeSlack) -> None:
        self.core = deployment.core(name)
        self.bot = build_bot(self.core)
        self.server = start_http(self.bot, host="127.0.0.1", port=0)
        self.driver = Driver(slack, self.server.url())

    def close(self) -> None:
        """Stop receiving, finish the answers accepted, release the Core."""
        self.server.stop()
        self.bot.close()
        self.core.close()


def slack_env(slack: FakeSlack) -> dict[str, str]:
    """What the web processes' Slack adapters read from their environment (HTTP mode)."""
    return {
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "CODECITE_SLACK_API_URL": slack.base_url,
    }


@contextmanager
def dedicated_postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server of the test's own, to stop and start without disturbing the
    session's (skipped locally without the binaries, failed under CI)."""
    initdb, pg_ctl = find_binary("initdb"), find_binary("pg_ctl")
    if initdb is None or pg_ctl is None:
        unavailable("initdb/pg_ctl not found (install the postgresql package)")
    assert initdb is not None and pg_ctl is not None
    root = Path(tempfile.mkdtemp(prefix="codecite-pg-restart-"))  # the postgres user's to use
    try:
        server = PostgresServer(root, initdb, pg_ctl)
        try:
            yield server
        finally:
            with suppress(RuntimeError):  # a test may leave it stopped
                server.stop("immediate")
    finally:
        shutil.rmtree(root, ignore_errors=True)


class Hold:
    """Holds every call of a function until released: answers kept in flight on purpose."""

    def __init__(self) -> None:
        self.entered = threading.Semaphore(0)
        self.release = threading.Event()

    def wrap(self, fn: Callable[..., T]) -> Callable[..., T]:
        def held(*args: Any, **kwargs: Any) -> T:
            self.entered.release()
            if not self.release.wait(timeout=30):
                raise AssertionError("never released")
            return fn(*args, **kwargs)

        held.__wrapped__ = fn  # type: ignore[attr-defined]
        return held

    def wait_entered(self, count: int, timeout: float = 15.0) -> None:
        for _ in range(count):
            assert self.entered.acquire(timeout=timeout), "the answers never got this far"
