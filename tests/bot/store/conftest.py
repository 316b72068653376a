"""Every contract test runs once per storage implementation (tests/support/stores.KINDS)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.store import StoreSet
from tests.support.postgres import PostgresServer
from tests.support.stores import KINDS, open_kind, use_database


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def home(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """The data directory; for the postgres kind, with a fresh database of its own."""
    home = tmp_path / "home"
    if kind == "postgres":
        server: PostgresServer = request.getfixturevalue("postgres_server")
        use_database(home, server.new_database())
    return home


@pytest.fixture
def stores(kind: str, home: Path) -> Iterator[StoreSet]:
    opened = open_kind(kind, home)
    yield opened
    opened.close()


@pytest.fixture
def other(kind: str, home: Path) -> Iterator[StoreSet]:
    """The same stores as another process sees them (its own connections)."""
    opened = open_kind(kind, home)
    yield opened
    opened.close()
