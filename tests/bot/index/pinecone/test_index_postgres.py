"""The whole index contract once more, with Pinecone's repository state in PostgreSQL
(`stores.pinecone_state` of a database-backed store set) instead of the SQLite file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pinecone import Pinecone

from bot.index.pinecone.index import PineconeIndex
from bot.models import RepoState
from bot.runtime.retry import Retrier, RetryPolicy
from bot.store import open_store
from tests.servers.pinecone_fake import FakePinecone
from tests.support.index_contract import IndexContract, change_set, sample_chunks

DIM = 8


@pytest.fixture(autouse=True)
def _instant_sdk_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("pinecone._internal.http_client._retry_sleep", lambda _s: None)


def open_index(server: FakePinecone, state: object) -> PineconeIndex:
    pc = Pinecone(api_key=server.api_key, host=server.url, ssl_verify=False)
    retrier = Retrier(RetryPolicy(max_attempts=3), sleep=lambda _s: None)
    return PineconeIndex(pc, state, host=server.url, dimension=DIM, retrier=retrier)  # type: ignore[arg-type]


class TestPineconeContractOnPostgresState(IndexContract):
    DIM = DIM

    @pytest.fixture
    def index(self, tmp_path: Path, database_url: str) -> Iterator[PineconeIndex]:
        stores = open_store(tmp_path / "home", database_url=database_url)
        with FakePinecone(dimension=self.DIM) as server:
            idx = open_index(server, stores.pinecone_state)
            yield idx
            idx.close()
        stores.close()


def test_a_second_process_sees_the_commit_the_first_indexed(
    tmp_path: Path, database_url: str
) -> None:
    """The freshness bug of issue 14: a web process must answer with the scheduler's commit."""
    scheduler = open_store(tmp_path / "a", database_url=database_url)
    web = open_store(tmp_path / "b", database_url=database_url)  # its own empty data directory
    try:
        with FakePinecone(dimension=DIM) as server:
            writer = open_index(server, scheduler.pinecone_state)
            reader = open_index(server, web.pinecone_state)
            chunks = sample_chunks("alpha")
            writer.apply(change_set("alpha", chunks, dim=DIM, commit="1" * 40))
            [state] = reader.repo_states()
            assert isinstance(state, RepoState) and state.commit == "1" * 40
            gone = chunks[0]
            writer.apply(
                change_set(
                    "alpha",
                    [],
                    dim=DIM,
                    deletes=[gone.id],
                    removed_paths=[gone.path],
                    commit="2" * 40,
                )
            )
            assert [s.commit for s in reader.repo_states()] == ["2" * 40]
            assert gone.path not in reader.manifest("alpha")
            writer.close()
            reader.close()
    finally:
        scheduler.close()
        web.close()
