"""A throwaway PostgreSQL server for the test suite: one per session, one database per test.

    def test_x(postgres: PostgresServer) -> None:
        url = postgres.new_database()      # an empty schema of its own, not yet migrated

One database holds a schema per test (the URL's search_path names it). The server
is the distribution's (`initdb` and `pg_ctl` on PATH or under
/usr/lib/postgresql/<major>/bin), started in a temp directory on a free loopback
port, with its unix socket in that directory, and stopped when the session ends.
Run as root, both run as the `postgres` user (initdb refuses root). fsync is off (the
machine never crashes under a test); commits still reach the WAL, so a test that
stops the server with `-m immediate` and starts it again loses nothing committed.
Without the binaries, tests that need it are skipped, except under CI (the CI
variable set), where they fail: CI never silently skips them.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.pgserver import find_binary, free_port, run_as_prefix

_STOP_TIMEOUT = "30"
SHARED = "codecite_tests"  # the database holding every test's schema
PASSWORD = "s3cret-test-password"  # TCP connections authenticate (scram), as in production


class PostgresServer:
    """A running server; `new_database()` hands out a fresh database URL per call."""

    def __init__(self, root: Path, initdb: str, pg_ctl: str) -> None:
        self.root = root
        self.data = root / "data"
        self.port = free_port()
        self._pg_ctl = pg_ctl
        self._as = run_as_prefix()
        self._names = itertools.count(1)
        self._shared = False
        if self._as:
            shutil.chown(root, user="postgres", group="postgres")
        pwfile = root / "pwfile"
        pwfile.write_text(PASSWORD + "\n")
        if self._as:
            shutil.chown(pwfile, user="postgres", group="postgres")
        self._run(
            initdb,
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "-E",
            "UTF8",
            f"--pwfile={pwfile}",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
        )
        self._options = options = (
            f"-p {self.port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c full_page_writes=off -c max_connections=300"
        )
        self._run(
            pg_ctl, "-D", str(self.data), "-l", str(root / "log"), "-o", options, "-w", "start"
        )

    @property
    def base_url(self) -> str:
        return f"postgresql://postgres:{PASSWORD}@127.0.0.1:{self.port}"

    def url(self, database: str) -> str:
        return f"{self.base_url}/{database}"

    def new_database(self) -> str:
        """The URL of a fresh, empty namespace for one test: a schema of its own in one shared
        database, named by the URL's search_path (CREATE DATABASE takes a few hundred ms, a
        schema about one), so tests never see each other's tables."""
        if not self._shared:
            self.sql(f'CREATE DATABASE "{SHARED}"')
            self._shared = True
        name = f"test_{os.getpid()}_{next(self._names)}"
        self.sql(f'CREATE SCHEMA "{name}"', SHARED)
        return f"{self.url(SHARED)}?options=-csearch_path%3D{name}"

    def sql(self, statement: str, database: str = "postgres") -> None:
        import psycopg

        with psycopg.connect(self.url(database), autocommit=True) as conn:
            conn.execute(statement.encode())

    def stop(self, mode: str = "fast") -> None:
        self._run(self._pg_ctl, "-D", str(self.data), "-m", mode, "-t", _STOP_TIMEOUT, "stop")

    def start(self) -> None:
        """Start the server again after `stop` (same port, same data)."""
        self._run(
            self._pg_ctl,
            "-D",
            str(self.data),
            "-l",
            str(self.root / "log"),
            "-o",
            self._options,
            "-w",
            "start",
        )

    def _run(self, *command: str) -> None:
        done = subprocess.run([*self._as, *command], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{command[0]} failed: {done.stderr or done.stdout}")


def unavailable(reason: str) -> None:
    """Skip locally; fail under CI, so CI never passes without PostgreSQL."""
    if os.environ.get("CI"):
        pytest.fail(f"PostgreSQL is required under CI: {reason}", pytrace=False)
    pytest.skip(f"no PostgreSQL here: {reason}")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    initdb, pg_ctl = find_binary("initdb"), find_binary("pg_ctl")
    if initdb is None or pg_ctl is None:
        unavailable("initdb/pg_ctl not found (install the postgresql package)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        unavailable("psycopg is not installed")
    assert initdb is not None and pg_ctl is not None
    root = Path(tempfile.mkdtemp(prefix="codecite-pg-"))
    try:
        server = PostgresServer(root, initdb, pg_ctl)
    except RuntimeError as exc:
        shutil.rmtree(root, ignore_errors=True)
        unavailable(str(exc))
        raise
    try:
        yield server
    finally:
        try:
            server.stop("immediate")
        finally:
            shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def postgres(postgres_server: PostgresServer) -> PostgresServer:
    return postgres_server


@pytest.fixture
def database_url(postgres_server: PostgresServer) -> str:
    """A fresh database of the session's server, for this test alone."""
    return postgres_server.new_database()
