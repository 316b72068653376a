"""The storage implementations the contract tests run against, and a child process that
holds an ingest lock (for tests of locks between processes).

Add an implementation to KINDS (and to `open_kind`) and every contract test in
tests/bot/store/ runs against it too.

    python -m tests.support.stores hold <kind> <home> <repo>   # prints "held", then waits
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from bot.store import StoreSet, open_store

ROOT = Path(__file__).resolve().parents[2]
KINDS = ("sqlite", "postgres")
URL_VARIABLE = "CODECITE_TEST_STORE_URL"  # hands a child process its test's database

_databases: dict[Path, str] = {}  # home -> its test's database (postgres kind)


def use_database(home: Path, url: str) -> None:
    """Give `home`'s postgres stores the database `url` (one fresh database per test)."""
    _databases[home] = url


def open_kind(kind: str, home: Path, *, embedding_cache_max: int | None = None) -> StoreSet:
    """A fresh set of stores of `kind` over `home` (a second call: another process's view:
    its own connection pool on the same database)."""
    if kind == "sqlite":
        return open_store(home, embedding_cache_max=embedding_cache_max)
    if kind == "postgres":
        url = _databases.get(home) or os.environ.get(URL_VARIABLE)
        if not url:
            raise ValueError(f"no database for {home}: call use_database first")
        return open_store(home, database_url=url, embedding_cache_max=embedding_cache_max)
    raise ValueError(f"unknown store kind {kind!r}")


def lock_holder(kind: str, home: Path, repo: str) -> subprocess.Popen[str]:
    """A child process holding `repo`'s lock until it is killed; returns once it holds it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if home in _databases:
        env[URL_VARIABLE] = _databases[home]
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.support.stores", "hold", kind, str(home), repo],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    if line.strip() != "held":
        child.kill()
        child.wait()
        raise AssertionError(f"the lock holder did not start: {line!r}")
    return child


def _hold(kind: str, home: Path, repo: str) -> None:
    stores = open_kind(kind, home)
    with stores.locks.hold(repo, wait=30):
        print("held", flush=True)
        time.sleep(600)  # until killed


if __name__ == "__main__":
    if sys.argv[1:2] == ["hold"]:
        _hold(sys.argv[2], Path(sys.argv[3]), sys.argv[4])
