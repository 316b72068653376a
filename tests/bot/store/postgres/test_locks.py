"""Advisory locks die with their session: a backend terminated by the server (or a process
killed, see tests/bot/store/test_locks.py) frees the repository."""

from __future__ import annotations

import time
from pathlib import Path

import psycopg

from tests.support.stores import lock_holder, open_kind, use_database


def test_a_terminated_session_frees_its_lock(database_url: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    use_database(home, database_url)
    stores = open_kind("postgres", home)
    child = lock_holder("postgres", home, "api")
    try:
        assert stores.locks.busy("api")
        with psycopg.connect(database_url, autocommit=True) as admin:
            [(ended,)] = admin.execute(  # the child's session: the only advisory lock held
                "SELECT count(pg_terminate_backend(pid)) FROM pg_locks WHERE locktype = "
                "'advisory' AND granted AND pid <> pg_backend_pid()"
            ).fetchall()
        assert ended == 1
        deadline = time.monotonic() + 5
        while stores.locks.busy("api") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not stores.locks.busy("api")
        with stores.locks.hold("api", wait=0):
            pass
    finally:
        child.kill()
        child.wait()
        stores.close()


def test_two_schemas_of_one_database_lock_apart(postgres, tmp_path: Path) -> None:
    """Two deployments in two schemas of one database: the same repository name, two locks."""
    homes = [tmp_path / "one", tmp_path / "two"]
    for home in homes:
        use_database(home, postgres.new_database())
    one, two = (open_kind("postgres", home) for home in homes)
    try:
        with one.locks.hold("api", wait=0):
            assert one.locks.busy("api") and not two.locks.busy("api")
            with two.locks.hold("api", wait=0):
                pass
    finally:
        one.close()
        two.close()
