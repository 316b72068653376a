"""Core.readiness over a real data directory, and `/readyz` over real HTTP in front of it:
every dependency a process answers with (the index, the stores, Pinecone, the model
endpoint), each probe's result kept a few seconds (here 0, unless a test says so)."""

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
from bot.readiness import CHECKING
from tests.servers.openai_fake import FakeOpenAI
from tests.servers.pinecone_fake import FakePinecone
from tests.support.shop import build_shop


@pytest.fixture(autouse=True)
def _checked_at_every_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODECITE_READY_CACHE_SECONDS", "0")


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


# -- the services behind the index and the model (issue 27: ready while Pinecone was away) --


@pytest.fixture
def remote_core(
    make_repo, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Core, FakePinecone, FakeOpenAI]]:  # type: ignore[no-untyped-def]
    """A process on Pinecone and a model: the state it keeps beside Pinecone is local."""
    # The SDK retries a 5xx with backoff; its documented seam makes those waits instant.
    monkeypatch.setattr("pinecone._internal.http_client._retry_sleep", lambda _s: None)
    repo = make_repo("shop")
    build_shop(repo)
    with FakeOpenAI(dimensions=8) as openai, FakePinecone(dimension=8) as pinecone:
        for name, value in {
            "CODECITE_INDEX": "pinecone",
            "PINECONE_API_KEY": pinecone.api_key,
            "PINECONE_HOST": pinecone.url,
            "OPENAI_API_KEY": "sk-test-ready-0123",
            "OPENAI_BASE_URL": openai.base_url,
            "CODECITE_EMBED_DIMENSIONS": "8",
        }.items():
            monkeypatch.setenv(name, value)
        core = Core.from_settings(Settings(), FileConfig())
        core.index_repo(str(repo.path), name="shop")
        yield core, pinecone, openai
        core.close()


def test_pinecone_away_is_not_ready_though_its_state_reads_fine(
    remote_core: tuple[Core, FakePinecone, FakeOpenAI],
) -> None:
    core, pinecone, _ = remote_core
    assert core.readiness() == ""
    assert core.index.repo_states()  # the state beside Pinecone answers
    pinecone.fail_next(20, status=503, path="/describe_index_stats")
    reason = core.readiness()
    assert reason.startswith("Pinecone: ") and "unavailable" in reason
    assert pinecone.url not in reason and "Traceback" not in reason
    pinecone.stop()  # gone altogether: not even a connection
    assert core.readiness().startswith("Pinecone: ")


def test_the_model_endpoint_away_is_not_ready(
    remote_core: tuple[Core, FakePinecone, FakeOpenAI],
) -> None:
    core, _, openai = remote_core
    assert core.readiness() == ""
    assert any(r.path.endswith("/models") for r in openai.requests)
    openai.fail_next(503)
    reason = core.readiness()
    assert reason.startswith("the model endpoint: "), reason
    assert openai.base_url not in reason and "sk-test" not in reason
    assert core.readiness() == ""  # back (the faults were used up)


def test_probes_within_a_few_seconds_share_one_check(
    make_repo, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("CODECITE_READY_CACHE_SECONDS", "30")
    with FakeOpenAI() as openai:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-ready-0123")
        monkeypatch.setenv("OPENAI_BASE_URL", openai.base_url)
        monkeypatch.setenv("CODECITE_EMBED_MODEL", "none")
        core = Core.from_settings(Settings(), FileConfig())
        try:
            while core.readiness() == CHECKING:  # the first check builds the model's client
                pass
            assert [core.readiness() for _ in range(5)] == [""] * 5
            assert sum(r.path.endswith("/models") for r in openai.requests) == 1
        finally:
            core.close()


def test_a_hanging_dependency_does_not_hold_the_probe(
    make_repo, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    with FakeOpenAI() as openai:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-ready-0123")
        monkeypatch.setenv("OPENAI_BASE_URL", openai.base_url)
        monkeypatch.setenv("CODECITE_EMBED_MODEL", "none")
        openai.delay_next(30)  # longer than a probe waits, shorter than nothing
        core = Core.from_settings(Settings(), FileConfig())
        try:
            assert core.readiness() == CHECKING  # answered before the model endpoint did
        finally:
            openai.stop()
            core.close()
