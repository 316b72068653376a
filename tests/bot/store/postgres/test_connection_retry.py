"""No connection check per checkout: a pooled connection the server dropped fails at its
first statement, and the call moves to another one; a write that may have reached the
server is never sent twice, it fails once with a StoreError."""

from __future__ import annotations

import threading

import psycopg
import pytest

from bot.errors import StoreError
from bot.store.postgres.connection import POOL_MAX, Database

Conn = psycopg.Connection[tuple[object, ...]]


def _pooled_pids(database: Database, count: int) -> set[int]:
    """Make the pool hold `count` connections (calls at once), and their backends' pids."""
    barrier = threading.Barrier(count)
    pids: set[int] = set()

    def hold(c: Conn) -> None:
        pids.add(c.info.backend_pid)
        barrier.wait(timeout=10)

    threads = [threading.Thread(target=database.read, args=(hold,)) for _ in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(pids) == count
    return pids


def _terminate(url: str, pids: set[int]) -> None:
    with psycopg.connect(url, autocommit=True) as admin:
        for pid in pids:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))


def test_every_dropped_connection_is_skipped_by_reads_and_writes(database_url: str) -> None:
    database = Database(database_url)
    try:
        database.run(lambda c: c.execute("CREATE TABLE notes (n INTEGER)"))
        dropped = _pooled_pids(database, POOL_MAX)
        _terminate(database_url, dropped)
        database.run(lambda c: c.execute("INSERT INTO notes VALUES (1)"))
        _terminate(database_url, dropped)  # idempotent: those backends are gone already
        row = database.read(lambda c: c.execute("SELECT count(*) FROM notes").fetchone())
        assert row == (1,)
        now = database.read(lambda c: c.info.backend_pid)
        assert now not in dropped
    finally:
        database.close()


def test_a_write_cut_off_after_begin_fails_once_and_is_not_repeated(database_url: str) -> None:
    database = Database(database_url)
    calls = []

    def write_then_die(c: Conn) -> None:
        calls.append(1)
        c.execute("INSERT INTO notes VALUES (1)")
        c.execute("SELECT pg_terminate_backend(pg_backend_pid())")

    try:
        database.run(lambda c: c.execute("CREATE TABLE notes (n INTEGER)"))
        with pytest.raises(StoreError) as raised:
            database.run(write_then_die)
        assert "could not be reached" in raised.value.operator_message
        assert len(calls) == 1
        assert database.read(lambda c: c.execute("SELECT count(*) FROM notes").fetchone()) == (0,)
    finally:
        database.close()


def test_a_read_cut_off_midway_is_read_again_on_a_fresh_connection(database_url: str) -> None:
    database = Database(database_url)
    pids: list[int] = []

    def read(c: Conn) -> int:
        pids.append(c.info.backend_pid)
        if len(pids) == 1:
            c.execute("SELECT pg_terminate_backend(pg_backend_pid())")
        row = c.execute("SELECT 41 + 1").fetchone()
        assert row is not None
        return int(str(row[0]))

    try:
        assert database.read(read) == 42
        assert len(pids) == 2 and pids[0] != pids[1]
    finally:
        database.close()
