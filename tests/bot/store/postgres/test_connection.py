"""The database URL is a secret, and failures are one clear sentence: an unreachable host,
a wrong password, a server restarted between calls, a full disk."""

from __future__ import annotations

import logging
import socket
from pathlib import Path

import psycopg
import pytest

from bot.errors import DiskFullError, StoreError
from bot.store import open_store
from bot.store.postgres.connection import Database, redact
from bot.store.records import Run
from tests.support.postgres import PASSWORD, PostgresServer
from tests.support.stores import open_kind, use_database


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_redact_keeps_only_scheme_host_port_and_database() -> None:
    assert redact("postgresql://bot:hunter2@db.example.com:6543/codecite?sslmode=require") == (
        "postgresql://db.example.com:6543/codecite"
    )
    assert redact("postgres://db/x") == "postgres://db/x"
    assert "hunter2" not in redact("host=db password=hunter2 dbname=x")


def test_an_unreachable_host_is_a_plain_sentence_for_users_and_names_it_for_the_operator(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    port = free_port()
    url = f"postgresql://bot:hunter2@127.0.0.1:{port}/codecite"
    stores = open_store(tmp_path / "home", database_url=url)
    with caplog.at_level(logging.DEBUG), pytest.raises(StoreError) as raised:
        stores.runs.last("api")
    stores.close()
    error = raised.value
    assert f"127.0.0.1:{port}/codecite" in error.operator_message
    assert "could not be reached" in error.operator_message
    assert "CODECITE_DATABASE_URL" in error.operator_message
    # What a chat user reads: no host, no port, no setting (issue 27).
    assert (
        error.user_message
        == "codecite's database is not answering right now; please try again shortly."
    )
    texts = (error.user_message, error.operator_message, error.detail, str(error), caplog.text)
    for text in (*texts, repr(stores)):
        assert "hunter2" not in text and url not in text


def test_readiness_pings_the_database_and_names_the_host_when_it_is_gone(
    postgres: PostgresServer, database_url: str, tmp_path: Path
) -> None:
    stores = open_store(tmp_path / "home", database_url=database_url)
    assert stores.ping() is None
    stores.close()
    port = free_port()
    gone = open_store(
        tmp_path / "home", database_url=f"postgresql://bot:hunter2@127.0.0.1:{port}/x"
    )
    with pytest.raises(StoreError) as raised:
        gone.ping()
    gone.close()
    assert f"127.0.0.1:{port}" in raised.value.operator_message
    assert "hunter2" not in str(raised.value) + raised.value.detail


def test_a_wrong_password_says_so_without_showing_it(
    postgres: PostgresServer, database_url: str, tmp_path: Path
) -> None:
    wrong = database_url.replace(PASSWORD, "not-the-password")
    stores = open_store(tmp_path / "home", database_url=wrong)
    with pytest.raises(StoreError) as raised:
        stores.feedback.list()
    stores.close()
    assert "credentials" in raised.value.operator_message
    assert "not-the-password" not in str(raised.value) + raised.value.detail


def test_a_restarted_server_serves_the_next_call(
    postgres: PostgresServer, database_url: str, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    use_database(home, database_url)
    stores = open_kind("postgres", home)
    try:
        stores.runs.record(Run("api", _start(), 1.0, "cli", commit="abc"))
        postgres.stop("immediate")  # every pooled connection dies
        postgres.start()
        last = stores.runs.last("api")
        assert last is not None and last.commit == "abc"
    finally:
        stores.close()


def test_a_full_disk_is_a_disk_full_error() -> None:
    database = Database("postgresql://bot:hunter2@127.0.0.1:1/x")
    with pytest.raises(DiskFullError) as raised, database.translated():
        raise psycopg.errors.DiskFull("could not extend file: No space left on device")
    assert "disk is full" in raised.value.user_message


def test_the_settings_take_either_variable_and_hide_the_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from bot.config import Settings

    monkeypatch.setenv("DATABASE_URL", "postgresql://u:hunter2@h/db")
    settings = Settings()
    assert settings.database == "postgresql://u:hunter2@h/db"
    assert "hunter2" not in repr(settings)
    monkeypatch.setenv("CODECITE_DATABASE_URL", "postgresql://u:p@other/db")
    assert Settings().database == "postgresql://u:p@other/db"  # ours wins
    monkeypatch.setenv("CODECITE_DATABASE_URL", " ")
    monkeypatch.delenv("DATABASE_URL")
    assert Settings().database is None


def _start():  # type: ignore[no-untyped-def]
    from datetime import UTC, datetime

    return datetime(2026, 12, 1, 9, tzinfo=UTC)
