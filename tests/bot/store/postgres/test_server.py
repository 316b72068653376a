"""The suite's own PostgreSQL server (tests/support/postgres.py): without it, tests that need
it are skipped on a developer's machine but fail under CI, so CI never passes without it."""

from __future__ import annotations

import psycopg
import pytest

from tests.support import postgres as server_module
from tests.support.postgres import PostgresServer


def test_without_a_server_tests_skip_locally(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception):
        server_module.unavailable("no initdb")


def test_without_a_server_tests_fail_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "1")
    with pytest.raises(pytest.fail.Exception, match="required under CI"):
        server_module.unavailable("no initdb")


def test_the_binaries_are_found_off_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Debian keeps them in /usr/lib/postgresql/<major>/bin, off PATH."""
    monkeypatch.setenv("PATH", "/nonexistent")
    found = server_module.find_binary("pg_ctl")
    if found is None:
        pytest.skip("no /usr/lib/postgresql here")
    assert found.startswith("/usr/lib/postgresql/") and found.endswith("/bin/pg_ctl")


def test_each_test_gets_a_namespace_of_its_own(postgres: PostgresServer) -> None:
    first, second = postgres.new_database(), postgres.new_database()
    assert first != second
    with psycopg.connect(first, autocommit=True) as conn:
        conn.execute("CREATE TABLE mine (x INTEGER)")
    with psycopg.connect(second) as conn:
        assert conn.execute("SELECT to_regclass('mine')").fetchone() == (None,)
