"""Core.readiness over a real data directory, and `/readyz` over real HTTP in front of it."""

from __future__ import annotations

import contextlib
import http.client
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.common.http_routes import RoutedServer, health_routes, start_routed
from bot.config import FileConfig, Settings
from bot.core import Core
from tests.support.shop import build_shop


@pytest.fixture
def core(make_repo, tmp_path: Path) -> Iterator[Core]:  # type: ignore[no-untyped-def]
    repo = make_repo("shop")
    build_shop(repo)
    core = Core.from_settings(Settings(), FileConfig())
    core.index_repo(str(repo.path), name="shop")
    yield core
    core.close()


@pytest.fixture
def readyz(core: Core) -> Iterator[RoutedServer]:
    server = start_routed(health_routes(core.readiness), port=0, host="127.0.0.1")
    yield server
    server.stop()


def _probe(server: RoutedServer, path: str = "/readyz") -> tuple[int, str]:
    """A fresh connection each time, as a platform's prober makes."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request("GET", path)
        reply = conn.getresponse()
        return reply.status, reply.read().decode()
    finally:
        conn.close()


def test_a_working_core_is_ready(core: Core, readyz: RoutedServer) -> None:
    assert core.readiness() == ""
    assert _probe(readyz) == (200, "ready")


def test_a_damaged_index_file_is_not_ready_until_it_is_repaired(
    core: Core, readyz: RoutedServer
) -> None:
    index = core.settings.index_path
    with contextlib.closing(sqlite3.connect(index)) as conn:  # as SQLite does on its own
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    good = index.read_bytes()
    index.write_bytes(b"this is not a database" * 300)
    status, body = _probe(readyz)
    assert status == 503
    assert body.startswith("not ready: index:") and "damaged" in body
    assert str(index) not in body and "Traceback" not in body
    assert _probe(readyz, "/healthz") == (200, "ok")  # alive all the same
    index.write_bytes(good)
    assert _probe(readyz) == (200, "ready")


def test_a_vanished_data_directory_is_not_ready_until_it_is_back(
    core: Core, readyz: RoutedServer
) -> None:
    home = core.settings.home
    away = home.with_name("home-moved")
    home.rename(away)
    try:
        status, body = _probe(readyz)
        assert status == 503 and body.startswith("not ready: ")
        assert str(home) not in body
        assert core.readiness() != ""
    finally:
        away.rename(home)
    assert _probe(readyz) == (200, "ready")
    assert core.readiness() == ""


def test_never_indexed_lists_configured_repositories_with_no_state(core: Core) -> None:
    from bot.config import RepoConfig

    core.use_config(
        FileConfig(repos=(RepoConfig(name="shop", path="/x"), RepoConfig(name="api", path="/y")))
    )
    assert core.never_indexed() == ["api"]
