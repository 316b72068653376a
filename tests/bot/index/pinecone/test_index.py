"""PineconeIndex against the real pinecone SDK and a strict fake data plane (no network).

The same contract suite runs against real Pinecone when PINECONE_API_KEY is set
(`-m live`); it uses its own index (PINECONE_TEST_INDEX, created at dimension 8
when missing) and a fresh namespace per test.
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pinecone import Pinecone

from bot.errors import ConfigError, StoreError
from bot.index.base import ChangeSet
from bot.index.pinecone.client import PineconeData
from bot.index.pinecone.index import PineconeIndex
from bot.index.pinecone.records import (
    METADATA_LIMIT,
    file_record_id,
    json_size,
    record_id,
    repo_record_id,
)
from bot.index.pinecone.state import PineconeState
from bot.models import FileEntry
from bot.runtime.retry import Retrier, RetryPolicy
from tests.servers.pinecone_fake import FakePinecone
from tests.support.index_contract import (
    COMMIT_2,
    IndexContract,
    change_set,
    file_docs,
    make_chunk,
    pad,
    sample_chunks,
    unit,
)

DIM = 8
LIVE_KEY = os.environ.get("PINECONE_API_KEY", "")  # read before conftest clears PINECONE_*
LIVE_INDEX = os.environ.get("PINECONE_TEST_INDEX", "codecite-contract")


@pytest.fixture(autouse=True)
def _instant_sdk_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK's data-plane transport always retries; its documented seam makes waits instant."""
    monkeypatch.setattr("pinecone._internal.http_client._retry_sleep", lambda _s: None)


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def client(fake: FakePinecone, api_key: str | None = None) -> Pinecone:
    # Plain http on loopback: there is no TLS to verify, and skipping the CA bundle
    # load saves a fifth of a second per client.
    return Pinecone(api_key=api_key or fake.api_key, host=fake.url, ssl_verify=False)


def open_index(fake: FakePinecone, home: Path, **kwargs: Any) -> PineconeIndex:
    kwargs.setdefault("retrier", Retrier(RetryPolicy(max_attempts=3), sleep=lambda _s: None))
    kwargs.setdefault("dimension", DIM)
    return PineconeIndex(client(fake), home / "pinecone_state.sqlite", host=fake.url, **kwargs)


@pytest.fixture
def fake() -> Iterator[FakePinecone]:
    with FakePinecone(dimension=DIM) as server:
        yield server


@pytest.fixture
def index(fake: FakePinecone, tmp_path: Path) -> Iterator[PineconeIndex]:
    idx = open_index(fake, tmp_path)
    yield idx
    idx.close()


class TestPineconeContract(IndexContract):
    DIM = DIM

    @pytest.fixture
    def index(self, tmp_path: Path) -> Iterator[PineconeIndex]:
        with FakePinecone(dimension=self.DIM) as server:
            idx = open_index(server, tmp_path)
            yield idx
            idx.close()


@pytest.mark.live
@pytest.mark.skipif(not LIVE_KEY, reason="PINECONE_API_KEY is not set")
class TestPineconeLiveContract(IndexContract):
    DIM = DIM

    @pytest.fixture
    def index(self, tmp_path: Path) -> Iterator[PineconeIndex]:
        pc = Pinecone(api_key=LIVE_KEY, source_tag="codecite_tests")
        idx = PineconeIndex(
            pc,
            tmp_path / "pinecone_state.sqlite",
            index_name=LIVE_INDEX,
            namespace=f"contract-{uuid.uuid4().hex[:12]}",
            freshness_timeout=60.0,
        )
        idx.init_index(self.DIM)
        yield idx
        for state in idx.repo_states():
            idx.remove_repo(state.name)
        idx.close()


def chunk_file(repo: str, path: str, n: int, *, body: int = 40) -> list[Any]:
    filler = "x = compute(value)  # " + "w" * body
    return [
        make_chunk(repo, path, f"def f{i}(value):\n    {filler}\n", start=3 * i + 1, symbol=f"f{i}")
        for i in range(n)
    ]


# -- writes: batching, trimming, deletes ----------------------------------------------


def test_upserts_are_batched_under_the_record_and_size_limits(
    index: PineconeIndex, fake: FakePinecone
) -> None:
    chunks = [c for f in range(5) for c in chunk_file("big", f"pkg/m{f}.py", 500, body=4000)]
    index.apply(change_set("big", chunks, dim=DIM))
    upserts = [r for r in fake.calls("/vectors/upsert") if r.status == 200]
    assert len(upserts) >= 3
    assert all(len(r.body["vectors"]) < 1000 for r in upserts)
    assert all(r.size < 2 * 1024 * 1024 for r in upserts)
    assert max(r.size for r in upserts) > 1_500_000  # batches are filled by size, not by count
    assert len(fake.records()) == 2500 + 5 + 1  # chunks, file records, the repo record
    assert index.stats().chunks == 2500


def test_huge_chunk_text_is_trimmed_under_the_metadata_limit(
    index: PineconeIndex, fake: FakePinecone
) -> None:
    text = "value = compute(value, factor)  # padding padding padding\n" * 2000
    text += "tailmarker = True\n"
    assert len(text) > 100_000
    big = make_chunk("alpha", "gen/table.py", text, symbol="table")
    index.apply(change_set("alpha", [big], dim=DIM))
    stored = fake.records()[record_id(big.id)].metadata
    assert stored is not None
    assert json_size(stored) < METADATA_LIMIT
    assert stored["truncated"] is True
    assert text.startswith(stored["text"])
    assert stored["text"].endswith("\n")  # cut at a line end
    # The sparse vector was built from the whole text: the trimmed tail is still searchable.
    hits = index.lexical(["tailmarker"], repos=None, k=3)
    assert [h.chunk.path for h in hits] == ["gen/table.py"]


def test_deletes_are_batched(index: PineconeIndex, fake: FakePinecone) -> None:
    chunks = chunk_file("alpha", "gen/many.py", 2300, body=0)
    index.apply(change_set("alpha", chunks, dim=DIM))
    replacement = make_chunk("alpha", "gen/many.py", "def only():\n    return 1\n")
    docs = file_docs([replacement])
    index.apply(change_set("alpha", [replacement], dim=DIM, files=docs))
    deletes = fake.bodies("/vectors/delete")
    assert len(deletes) >= 3
    assert all(len(body["ids"]) <= 1000 for body in deletes)
    assert sum(len(body["ids"]) for body in deletes) == 2300
    assert [h.chunk for h in index.lexical(["compute"], repos=None, k=5)] == []
    assert index.chunks_of("alpha", "gen/many.py") == [replacement]
    index.remove_repo("alpha")
    assert fake.records() == {}


def test_parallel_requests_are_bounded(fake: FakePinecone) -> None:
    data = PineconeData(client(fake).index(host=fake.url), workers=4)
    fake.gate(4)  # holds the first requests until four are in flight together
    assert data.fetch([f"id-{i}" for i in range(800)]) == {}  # 8 fetches of 100 ids
    assert len(fake.calls("/vectors/fetch")) == 8
    assert fake.gate_timeouts == 0
    assert fake.max_in_flight == 4


# -- scope and hybrid -------------------------------------------------------------------


def test_scope_is_a_server_side_filter(index: PineconeIndex, fake: FakePinecone) -> None:
    index.apply(change_set("alpha", sample_chunks("alpha"), dim=DIM))
    index.apply(change_set("beta", sample_chunks("beta"), dim=DIM))
    index.lexical(["callback"], repos=frozenset({"alpha"}), k=5)
    index.lexical(["callback"], repos=frozenset({"beta", "alpha"}), k=5)
    index.lexical(["callback"], repos=None, k=5)
    index.dense(pad(unit(1.0), DIM), repos=frozenset({"beta"}), k=5)
    index.files_lexical(["hook"], repos=frozenset({"alpha"}), k=5)
    filters = [body["filter"] for body in fake.bodies("/query")]
    assert filters == [
        {"$and": [{"rec": {"$eq": "chunk"}}, {"repo": {"$eq": "alpha"}}]},
        {"$and": [{"rec": {"$eq": "chunk"}}, {"repo": {"$in": ["alpha", "beta"]}}]},
        # unscoped: every repository the state lists (one being removed is hidden first)
        {"$and": [{"rec": {"$eq": "chunk"}}, {"repo": {"$in": ["alpha", "beta"]}}]},
        {"$and": [{"rec": {"$eq": "chunk"}}, {"repo": {"$eq": "beta"}}, {"dense": {"$eq": True}}]},
        {"$and": [{"rec": {"$eq": "file"}}, {"repo": {"$eq": "alpha"}}]},
    ]
    assert all("namespace" not in body for body in fake.bodies("/query"))


def test_namespace_is_used_for_every_call(fake: FakePinecone, tmp_path: Path) -> None:
    idx = open_index(fake, tmp_path, namespace="team-a")
    idx.apply(change_set("alpha", sample_chunks(), dim=DIM))
    assert idx.lexical(["callback"], repos=None, k=5)
    assert idx.ids_by_prefix("alpha#")
    idx.close()
    assert fake.records() == {}
    assert len(fake.records("team-a")) == 3 + 2 + 1
    assert {b.get("namespace") for b in fake.bodies("/vectors/upsert")} == {"team-a"}
    assert {b["namespace"] for b in fake.bodies("/query")} == {"team-a"}
    assert {r.params["namespace"][0] for r in fake.calls("/vectors/list")} == {"team-a"}


def test_hybrid_alpha_weights_dense_against_sparse(
    index: PineconeIndex, fake: FakePinecone
) -> None:
    lexical_match = make_chunk("alpha", "zoo/animals.py", "def zebra_quokka():\n    return 1\n")
    dense_match = make_chunk("alpha", "lib/other.py", "def unrelated():\n    return 2\n")
    vectors = {lexical_match.id: pad(unit(1.0, 0.0), DIM), dense_match.id: pad(unit(0.0, 1.0), DIM)}
    both = [lexical_match, dense_match]
    index.apply(change_set("alpha", both, dim=DIM, vectors=vectors))
    query = pad(unit(0.0, 1.0), DIM)
    dense_first = index.hybrid(query, ["zebra", "quokka"], repos=None, k=2, alpha=1.0)
    sparse_first = index.hybrid(query, ["zebra", "quokka"], repos=None, k=2, alpha=0.0)
    assert dense_first[0].chunk == dense_match
    assert sparse_first[0].chunk == lexical_match
    blended = index.hybrid(query, ["zebra", "quokka"], repos=None, k=2, alpha=0.25)
    body = fake.bodies("/query")[-1]
    assert body["vector"] == pytest.approx([0.25 * v for v in query])
    assert sum(body["sparseVector"]["values"]) == pytest.approx(0.75, abs=1e-4)
    assert {h.chunk.id for h in blended} == {c.id for c in both}
    assert index.alpha == 0.5  # the default, used when no alpha is passed
    index.hybrid(query, ["zebra"], repos=None, k=2)
    assert sum(fake.bodies("/query")[-1]["sparseVector"]["values"]) == pytest.approx(0.5, 1e-4)


def test_chunks_without_embeddings_are_lexical_only(
    index: PineconeIndex, fake: FakePinecone
) -> None:
    chunk = make_chunk("alpha", "a.py", "def lonely_function():\n    pass\n")
    index.apply(ChangeSet("alpha", change_set("alpha", [chunk], dim=DIM).state, upserts=[chunk]))
    stored = fake.records()[record_id(chunk.id)]
    assert any(stored.values) and stored.metadata is not None and stored.metadata["dense"] is False
    assert index.dense(pad(unit(1.0), DIM), repos=None, k=5) == []
    assert [h.chunk for h in index.lexical(["lonely"], repos=None, k=5)] == [chunk]
    assert index.chunks_of("alpha", "a.py") == [chunk]
    assert (index.stats().chunks, index.stats().vectors) == (1, 0)


def test_vectors_for_stored_chunks_are_backfilled(index: PineconeIndex, fake: FakePinecone) -> None:
    chunks = sample_chunks()
    state = change_set("alpha", chunks, dim=DIM).state
    index.apply(ChangeSet("alpha", state, upserts=chunks, files=file_docs(chunks)))
    assert index.stats().vectors == 0
    query = pad(unit(0.0, 1.0), DIM)
    index.apply(ChangeSet("alpha", state, vectors={chunks[1].id: query}))
    assert [h.chunk for h in index.dense(query, repos=None, k=3)] == [chunks[1]]
    assert index.stats().vectors == 1
    assert [h.chunk for h in index.lexical(["fire"], repos=None, k=3)] == [chunks[1]]
    stored = fake.records()[record_id(chunks[1].id)]
    assert stored.sparse is not None and stored.values == pytest.approx(query)
    with pytest.raises(StoreError):
        index.apply(ChangeSet("alpha", state, vectors={"alpha#nowhere.py#0123456789abcdef": query}))


def test_non_ascii_paths_get_ascii_record_ids(index: PineconeIndex, fake: FakePinecone) -> None:
    chunk = make_chunk("alpha", "docs/café/naïve_100%.py", "def crème():\n    pass\n")
    index.apply(change_set("alpha", [chunk], dim=DIM))
    assert all(rid.isascii() for rid in fake.records())
    assert index.ids_by_prefix("alpha#docs/caf") == [chunk.id]
    assert index.chunks_of("alpha", chunk.path) == [chunk]
    long_path = "dir/" + "é" * 240 + ".py"  # fits Chunk.id, but not once percent-encoded
    far = make_chunk("alpha", long_path, "def far():\n    pass\n")
    index.apply(change_set("alpha", [chunk, far], dim=DIM))
    assert max(len(rid) for rid in fake.records()) <= 512
    assert sorted(index.ids_by_prefix("alpha#")) == sorted([chunk.id, far.id])
    assert index.chunks_of("alpha", long_path) == [far]


def test_wrong_vector_dimension_is_a_config_error_before_any_write(
    index: PineconeIndex, fake: FakePinecone
) -> None:
    chunk = make_chunk("alpha", "a.py", "def a():\n    pass\n")
    with pytest.raises(ConfigError, match="12-dimensional"):
        index.apply(change_set("alpha", [chunk], dim=DIM, vectors={chunk.id: [0.1] * 12}))
    with pytest.raises(ConfigError):
        index.dense([0.1] * 12, repos=None, k=3)
    assert fake.requests == []


# -- failures: retries, refusals, interruptions -------------------------------------------


def test_rate_limits_are_retried_until_success(fake: FakePinecone, tmp_path: Path) -> None:
    sleeps = Sleeps()
    idx = open_index(fake, tmp_path, retrier=Retrier(RetryPolicy(max_attempts=3), sleep=sleeps))
    fake.fail_next(5, status=429, retry_after=0)  # more than the SDK's own retries absorb
    idx.apply(change_set("alpha", sample_chunks(), dim=DIM))
    statuses = [r.status for r in fake.requests]
    assert statuses[:6] == [429, 429, 429, 429, 429, 200]
    assert sleeps == [0.0]  # our policy stepped in once, honouring Retry-After: 0
    fake.fail_next(2, status=503)
    assert [h.chunk.symbol for h in idx.lexical(["callback"], repos=None, k=3)] == ["register_hook"]
    idx.close()


def test_persistent_rate_limit_is_a_store_error(index: PineconeIndex, fake: FakePinecone) -> None:
    index.apply(change_set("alpha", sample_chunks(), dim=DIM))
    fake.fail_next(12, status=429)
    with pytest.raises(StoreError) as caught:
        index.lexical(["callback"], repos=None, k=3)
    assert (
        caught.value.user_message == "Pinecone is rate limiting codecite; please try again later."
    )


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (401, "Pinecone rejected the API key; check PINECONE_API_KEY."),
        (403, "Pinecone rejected the API key; check PINECONE_API_KEY."),
        (404, "The Pinecone index was not found; check PINECONE_INDEX or PINECONE_HOST."),
        (400, "Pinecone refused the query request."),
    ],
)
def test_refusals_become_one_line_store_errors(
    index: PineconeIndex, fake: FakePinecone, status: int, message: str
) -> None:
    fake.fail_next(1, status=status)
    with pytest.raises(StoreError) as caught:
        index.lexical(["callback"], repos=frozenset({"alpha"}), k=3)
    assert caught.value.user_message == message
    assert "\n" not in str(caught.value)
    assert len(fake.requests) == 1  # refusals are not retried


def test_wrong_api_key_is_a_store_error(fake: FakePinecone, tmp_path: Path) -> None:
    pc = client(fake, api_key="not-the-key")
    idx = PineconeIndex(pc, tmp_path / "s.sqlite", host=fake.url, dimension=DIM)
    with pytest.raises(StoreError, match="API key"):
        idx.apply(change_set("alpha", sample_chunks(), dim=DIM))
    assert idx.repo_states() == []
    idx.close()


def test_refused_upsert_leaves_the_local_state_untouched(tmp_path: Path) -> None:
    chunks = sample_chunks()
    with FakePinecone(dimension=DIM, sparse=False) as no_sparse:  # refuses sparse values
        idx = open_index(no_sparse, tmp_path)
        with pytest.raises(StoreError) as caught:
            idx.apply(change_set("alpha", chunks, dim=DIM))
        assert caught.value.user_message == "Pinecone refused the upsert request."
        assert (idx.repo_states(), idx.manifest("alpha")) == ([], {})
        assert idx.stats().chunks == 0
        idx.close()


def test_failed_update_keeps_the_previous_state(index: PineconeIndex, fake: FakePinecone) -> None:
    first = change_set("alpha", sample_chunks(), dim=DIM)
    index.apply(first)
    fake.fail_next(1, status=400, path="/vectors/upsert")
    new = make_chunk("alpha", "hooks/registry.py", "def other():\n    pass\n", commit=COMMIT_2)
    with pytest.raises(StoreError):
        index.apply(change_set("alpha", [new], dim=DIM, commit=COMMIT_2))
    assert index.repo_states() == [first.state]
    assert set(index.manifest("alpha")) == {d.path for d in first.files}


def _v2(chunks: list[Any]) -> tuple[ChangeSet, Any]:
    """Replace the first chunk of hooks/registry.py."""
    new = make_chunk(
        "alpha", "hooks/registry.py", "def register(name, handler):\n    pass\n", commit=COMMIT_2
    )
    docs = [*file_docs([new, chunks[1]]), *file_docs([chunks[2]])]
    change = change_set(
        "alpha", [new], dim=DIM, deletes=[chunks[0].id], files=docs, commit=COMMIT_2
    )
    return change, new


def expected_ids(index: PineconeIndex, repo: str) -> set[str]:
    manifest = index.manifest(repo)
    ids = {record_id(cid) for entry in manifest.values() for cid in entry.chunk_ids}
    return ids | {file_record_id(repo, path) for path in manifest} | {repo_record_id(repo)}


def test_interrupted_apply_then_rerun_converges(index: PineconeIndex, fake: FakePinecone) -> None:
    chunks = sample_chunks()
    first = change_set("alpha", chunks, dim=DIM)
    index.apply(first)
    change, new = _v2(chunks)
    fake.fail_next(1, status=400, path="/vectors/delete")  # crash after the new chunks are in
    with pytest.raises(StoreError):
        index.apply(change)
    assert index.repo_states() == [first.state]  # the old state still answers
    assert record_id(new.id) in fake.records() and record_id(chunks[0].id) in fake.records()
    index.apply(change)  # the rerun
    assert set(fake.records()) == expected_ids(index, "alpha")
    assert record_id(chunks[0].id) not in fake.records()
    assert index.repo_states() == [change.state]
    assert index.chunks_of("alpha", "hooks/registry.py") == [new, chunks[1]]


def test_strays_of_an_interrupted_apply_are_removed_by_the_next_one(
    index: PineconeIndex, fake: FakePinecone
) -> None:
    chunks = sample_chunks()
    index.apply(change_set("alpha", chunks, dim=DIM))
    change, abandoned = _v2(chunks)
    fake.fail_next(1, status=400, path="/vectors/delete")
    with pytest.raises(StoreError):
        index.apply(change)
    # The next ingest is computed from the old manifest and no longer contains `abandoned`.
    later = make_chunk("alpha", "hooks/registry.py", "def third():\n    pass\n", commit=COMMIT_2)
    docs = [*file_docs([later, chunks[1]]), *file_docs([chunks[2]])]
    index.apply(change_set("alpha", [later], dim=DIM, files=docs, commit=COMMIT_2))
    assert record_id(abandoned.id) not in fake.records()
    assert set(fake.records()) == expected_ids(index, "alpha")


def test_a_rejournaled_live_chunk_is_not_taken_for_a_stray(
    index: PineconeIndex, fake: FakePinecone
) -> None:
    state = change_set("alpha", [], dim=DIM).state
    loose = make_chunk("alpha", "loose.py", "def loose():\n    pass\n")  # no FileDoc
    gone = make_chunk("alpha", "gone.py", "def gone():\n    pass\n")
    index.apply(ChangeSet("alpha", state, upserts=[loose]))
    index.apply(change_set("alpha", [gone], dim=DIM))
    fake.fail_next(1, status=400, path="/vectors/delete")
    with pytest.raises(StoreError):  # journals `loose` again, then fails deleting gone.py
        index.apply(change_set("alpha", [loose], dim=DIM, files=[], removed_paths=["gone.py"]))
    index.apply(change_set("alpha", [], dim=DIM, removed_paths=["gone.py"]))
    assert record_id(loose.id) in fake.records()
    assert record_id(gone.id) not in fake.records()
    assert index.chunks_of("alpha", "loose.py") == [loose]


# -- local state rebuilt from Pinecone ------------------------------------------------------


def test_rebuild_state_from_pinecone(fake: FakePinecone, tmp_path: Path) -> None:
    first = open_index(fake, tmp_path / "one")
    texts = {"hooks/registry.py": "def register_hook(): ...\n# hooks everywhere\n"}
    first.apply(change_set("alpha", sample_chunks("alpha"), dim=DIM, texts=texts))
    beta = sample_chunks("beta")
    change = change_set("beta", beta, dim=DIM)
    without_one = {k: v for k, v in change.vectors.items() if k != beta[2].id}
    first.apply(dataclasses.replace(change, vectors=without_one))

    def snapshot(idx: PineconeIndex) -> tuple[Any, ...]:
        return (
            idx.repo_states(),
            idx.manifest("alpha"),
            idx.manifest("beta"),
            idx.stats(),
            idx.lexical(["hook", "backoff"], repos=None, k=10),  # scores depend on the IDF stats
            idx.files_lexical(["hook", "attempt"], repos=frozenset({"beta"}), k=10),
        )

    before = snapshot(first)
    assert before[3].vectors == 5
    first.close()
    second = open_index(fake, tmp_path / "two")
    assert second.repo_states() == []
    second.rebuild_state()
    assert snapshot(second) == before
    second.close()


def test_rebuild_marks_files_without_a_file_record_for_reingest(
    index: PineconeIndex, fake: FakePinecone, tmp_path: Path
) -> None:
    orphan = make_chunk("alpha", "c.py", "def plain():\n    pass\n", start=5)
    state = change_set("alpha", [], dim=DIM).state
    index.apply(ChangeSet("alpha", state, upserts=[orphan]))
    assert index.manifest("alpha") == {}
    index.rebuild_state()
    assert index.manifest("alpha") == {"c.py": FileEntry("c.py", "", "python", (orphan.id,))}
    assert index.repo_states() == [state]


# -- the control plane --------------------------------------------------------------------------


def test_init_index_creates_a_hybrid_serverless_index(tmp_path: Path) -> None:
    with FakePinecone(index_name=None) as fake:
        pc = client(fake)
        idx = PineconeIndex(pc, tmp_path / "s.sqlite", index_name="codecite")
        idx.init_index(DIM)
        body = fake.bodies("/indexes")[0]
        assert body["name"] == "codecite"
        assert body["schema"]["fields"] == {
            "_values": {"type": "dense_vector", "dimension": DIM, "metric": "dotproduct"},
            "_sparse_values": {"type": "sparse_vector"},
        }
        assert body["deployment"]["deployment_type"] == "managed"
        idx.apply(change_set("alpha", sample_chunks(), dim=DIM))
        assert idx.lexical(["callback"], repos=None, k=1)
        idx.init_index(DIM)  # exists now: checked, not created again
        assert len(fake.calls("/indexes")) == 1
        idx.close()


def test_init_index_refuses_a_dimension_mismatch(tmp_path: Path) -> None:
    with FakePinecone(dimension=1536) as fake:
        pc = client(fake)
        idx = PineconeIndex(pc, tmp_path / "s.sqlite", index_name="codecite")
        with pytest.raises(ConfigError, match=r"1536-dimensional.*8-dimensional"):
            idx.init_index(DIM)
        assert fake.calls("/indexes") == []
        idx.close()


def test_init_index_refuses_an_index_without_sparse_support(tmp_path: Path) -> None:
    with FakePinecone(dimension=DIM, sparse=False) as fake:
        pc = client(fake)
        idx = PineconeIndex(pc, tmp_path / "s.sqlite", index_name="codecite")
        with pytest.raises(ConfigError, match="hybrid"):
            idx.init_index(DIM)
        idx.close()


def test_init_index_with_a_host_checks_through_the_data_plane(tmp_path: Path) -> None:
    with FakePinecone(dimension=16) as fake:
        idx = open_index(fake, tmp_path, dimension=None)
        with pytest.raises(ConfigError, match="16-dimensional"):
            idx.init_index(DIM)
        idx.init_index(None)  # adopts the index's dimension
        assert idx.dimension == 16
        assert [r.path for r in fake.requests] == ["/describe_index_stats"] * 2
        idx.close()


def test_a_state_file_from_another_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "pinecone_state.sqlite"
    PineconeState(path).close()
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(StoreError, match="another codecite version"):
        PineconeState(path)
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 99  # left as it was
