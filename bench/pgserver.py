"""A throwaway PostgreSQL server for the benchmarks, with production durability.

    with PostgresServer(Path(tmp)) as server:
        url = server.new_database("bench_answers")

Unlike the test fixture (tests/support/postgres.py, fsync off), the server keeps
PostgreSQL's defaults (fsync on, synchronous_commit on): a benchmark of what a
deployment pays per commit. It runs from the distribution's binaries (PATH or
/usr/lib/postgresql/<major>/bin) on a free loopback port, its unix socket in its
own directory; run as root, as the `postgres` user (initdb refuses root). TCP
connections authenticate with a password (scram), as a managed server would.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
from pathlib import Path
from types import TracebackType

PASSWORD = "bench-only-password"


class ServerUnavailable(RuntimeError):
    """No PostgreSQL binaries here, or the server would not start."""


def find_binary(name: str) -> str | None:
    """`name` from PATH, else the newest /usr/lib/postgresql/<major>/bin/<name>."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(
        glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    return candidates[-1] if candidates else None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def run_as_prefix() -> list[str]:
    """As root, run the server's tools as `postgres` (they refuse root)."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        raise ServerUnavailable("running as root and there is no `postgres` user") from None
    runuser = shutil.which("runuser")
    if runuser is None:
        raise ServerUnavailable("running as root and `runuser` is missing")
    return [runuser, "-u", "postgres", "--"]


class PostgresServer:
    def __init__(self, root: Path, *, fsync: bool = True) -> None:
        initdb, self._pg_ctl = find_binary("initdb"), find_binary("pg_ctl")
        if initdb is None or self._pg_ctl is None:
            raise ServerUnavailable("initdb/pg_ctl not found (install the postgresql package)")
        self.root = root
        self.data = root / "data"
        self.port = free_port()
        self.fsync = fsync
        self._as = run_as_prefix()
        pwfile = root / "pwfile"
        pwfile.write_text(PASSWORD + "\n")
        if self._as:
            shutil.chown(root, user="postgres", group="postgres")
            shutil.chown(pwfile, user="postgres", group="postgres")
        self._run(
            initdb, "-D", str(self.data), "-U", "postgres", "-E", "UTF8", f"--pwfile={pwfile}",
            "--auth-local=trust", "--auth-host=scram-sha-256",
        )  # fmt: skip
        options = (
            f"-p {self.port} -k {root} -c listen_addresses=127.0.0.1 -c max_connections=200"
            + ("" if fsync else " -c fsync=off")
        )
        self._run(
            self._pg_ctl, "-D", str(self.data), "-l", str(root / "log"), "-o", options, "-w",
            "start",
        )  # fmt: skip

    @property
    def base_url(self) -> str:
        return f"postgresql://postgres:{PASSWORD}@127.0.0.1:{self.port}"

    def new_database(self, name: str) -> str:
        self.sql(f'CREATE DATABASE "{name}"')
        return f"{self.base_url}/{name}"

    def sql(self, statement: str) -> None:
        import psycopg

        with psycopg.connect(f"{self.base_url}/postgres", autocommit=True) as conn:
            conn.execute(statement.encode())

    def stop(self) -> None:
        self._run(self._pg_ctl, "-D", str(self.data), "-m", "immediate", "-t", "30", "stop")

    def __enter__(self) -> PostgresServer:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _run(self, *command: str) -> None:
        done = subprocess.run([*self._as, *command], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise ServerUnavailable(f"{command[0]} failed: {done.stderr or done.stdout}")
