"""Re-ingest jobs in tests: a job runner beside a Core (what the scheduler's process runs),
Cores that share only PostgreSQL and Pinecone (each with its own data directory), and a
scheduler in a child process that a test can kill -9.

    with running_jobs(core):
        core.run_command("reindex shop", admin).final_text(timeout=60)

    python -m tests.support.jobs runner   # env: shared_env(...); prints "running <owner>"
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from bot.config import FileConfig, RepoConfig, Settings, load_file_config
from bot.core import Core
from bot.index.pinecone.index import PineconeIndex
from bot.jobs import JobRunner
from bot.wiring import make_embedder, make_llm, make_stores
from tests.servers.openai_fake import FakeOpenAI
from tests.servers.pinecone_fake import FakePinecone

ROOT = Path(__file__).resolve().parents[2]
DIM = 64  # the fake embeddings' and the fake Pinecone index's dimension


def configured_shop(repo_path: Path) -> Core:
    """A Core whose codecite.toml lists the shop repository at `repo_path` (not indexed)."""
    config = FileConfig(repos=(RepoConfig(name="shop", path=str(repo_path)),))
    return Core.from_settings(Settings(), config)


@contextmanager
def running_jobs(core: Core) -> Iterator[JobRunner]:
    """`core`'s job runner, started for the body of the `with` and stopped after it."""
    runner = core.job_runner()
    runner.start()
    try:
        yield runner
    finally:
        runner.stop(timeout=60)


def shared_env(
    home: Path,
    *,
    database_url: str,
    openai_url: str,
    pinecone_url: str,
    pinecone_key: str,
    config: Path,
    lease: float = 2.0,
) -> dict[str, str]:
    """The environment of one codecite process on its own machine: its own data
    directory; state in PostgreSQL, vectors in Pinecone, models at the fake OpenAI."""
    return {
        "CODECITE_HOME": str(home),
        "CODECITE_CONFIG": str(config),
        "CODECITE_DATABASE_URL": database_url,
        "CODECITE_INDEX": "pinecone",
        "PINECONE_API_KEY": pinecone_key,
        "PINECONE_HOST": pinecone_url,
        "OPENAI_API_KEY": "sk-test-abcdef",
        "OPENAI_BASE_URL": openai_url,
        "CODECITE_EMBED_DIMENSIONS": str(DIM),
        "CODECITE_JOB_LEASE_SECONDS": str(lease),
        "CODECITE_JOB_POLL_SECONDS": "0.1",
    }


@dataclass
class Services:
    """The fake OpenAI and Pinecone every process of a test shares, and how to start one."""

    openai: FakeOpenAI
    pinecone: FakePinecone
    env: Callable[[str], dict[str, str]]  # a process's environment, by data directory name


@contextmanager
def shared_services(root: Path, database_url: str, config: Path) -> Iterator[Services]:
    """Fake OpenAI and Pinecone for processes whose data directories are under `root`."""
    with FakeOpenAI(dimensions=DIM) as openai, FakePinecone(dimension=DIM) as pinecone:

        def env(name: str) -> dict[str, str]:
            return shared_env(
                root / name,
                database_url=database_url,
                openai_url=openai.base_url,
                pinecone_url=pinecone.url,
                pinecone_key=pinecone.api_key,
                config=config,
            )

        yield Services(openai, pinecone, env)


def shared_core(settings: Settings) -> Core:
    """A Core whose state is all in the database and the index (nothing read from its
    data directory, so a fresh directory answers like any other)."""
    stores = make_stores(settings)
    index = PineconeIndex.from_settings(
        settings, dimension=settings.embed_dimensions, stores=stores
    )
    index.init_index(settings.embed_dimensions)
    return Core(
        settings,
        load_file_config(settings.resolved_config_path()),
        index,
        llm=make_llm(settings),
        embedder=make_embedder(settings, stores),
        stores=stores,
    )


def scheduler_child(env: dict[str, str]) -> subprocess.Popen[str]:
    """A child process running a job runner over `env`'s stores; returns once it runs."""
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.support.jobs", "runner"],
        cwd=ROOT,
        env={**os.environ, **env, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    if not line.startswith("running "):
        child.kill()
        child.wait()
        raise AssertionError(f"the scheduler child did not start: {line!r}")
    return child


def _run_runner() -> None:
    core = shared_core(Settings())
    runner = core.job_runner()
    runner.start()
    print(f"running {runner.owner}", flush=True)
    time.sleep(600)  # until killed


if __name__ == "__main__":
    if sys.argv[1:2] == ["runner"]:
        _run_runner()
