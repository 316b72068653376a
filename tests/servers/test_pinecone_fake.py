"""The fake Pinecone refuses what Pinecone refuses, and filters and pages like it."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from pinecone import Pinecone
from pinecone.errors import ApiError

from tests.servers.pinecone_fake import FakePinecone

DIM = 4


@pytest.fixture
def fake() -> Iterator[FakePinecone]:
    with FakePinecone(dimension=DIM) as server:
        yield server


def post(fake: FakePinecone, path: str, body: Any, *, key: str | None = None) -> tuple[int, Any]:
    """Raw HTTP, for requests the SDK would already refuse on the client side."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(fake.url + path, data=data, method="POST")
    request.add_header("Content-Type", "application/json")
    request.add_header("Api-Key", fake.api_key if key is None else key)
    try:
        with urllib.request.urlopen(request) as response:  # loopback only
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def vec(rid: str, **extra: Any) -> dict[str, Any]:
    return {"id": rid, "values": [0.1, 0.2, 0.3, 0.4], **extra}


def upsert(fake: FakePinecone, *vectors: dict[str, Any]) -> int:
    return post(fake, "/vectors/upsert", {"vectors": list(vectors)})[0]


def test_requests_need_the_api_key(fake: FakePinecone) -> None:
    assert post(fake, "/describe_index_stats", {}, key="wrong")[0] == 401
    assert post(fake, "/describe_index_stats", {})[0] == 200


@pytest.mark.parametrize(
    "record",
    [
        vec("x" * 513),
        vec("caf\u00e9"),
        vec("a", values=[0.1, 0.2]),  # wrong dimension
        vec("a", values=[0.0] * DIM),  # dense vectors need a non-zero value
        vec("a", metadata={"k": None}),
        vec("a", metadata={"k": {"nested": 1}}),
        vec("a", metadata={"k": [1, 2]}),
        vec("a", metadata={"text": "x" * 41_000}),
        vec("a", sparseValues={"indices": [1, 2], "values": [0.5]}),
        vec("a", sparseValues={"indices": [1, 1], "values": [0.5, 0.5]}),
        vec("a", sparseValues={"indices": [], "values": []}),
        vec("a", sparseValues={"indices": [-1], "values": [0.5]}),
        vec("a", sparseValues={"indices": list(range(1001)), "values": [0.1] * 1001}),
        vec("a", sparse_values={"indices": [1], "values": [1.0]}),  # snake_case is not the wire
    ],
)
def test_invalid_records_are_refused(fake: FakePinecone, record: dict[str, Any]) -> None:
    assert upsert(fake, record) == 400
    assert fake.records() == {}


def test_upsert_limits(fake: FakePinecone) -> None:
    assert upsert(fake, *(vec(f"r{i}") for i in range(1001))) == 400
    big = "x" * 30_000
    too_large = [vec(f"r{i}", metadata={"text": big}) for i in range(75)]  # ~2.25 MB
    assert upsert(fake, *too_large) == 400
    assert upsert(fake, *(vec(f"r{i}") for i in range(1000))) == 200
    assert len(fake.records()) == 1000


def test_sparse_values_need_a_sparse_field_and_dotproduct() -> None:
    sparse = {"indices": [3], "values": [1.0]}
    with FakePinecone(dimension=DIM, sparse=False) as no_field:
        assert upsert(no_field, vec("a", sparseValues=sparse)) == 400
    with FakePinecone(dimension=DIM, metric="cosine") as cosine:
        assert upsert(cosine, vec("a")) == 200
        query = {"topK": 1, "vector": [1.0, 0, 0, 0], "sparseVector": sparse}
        assert post(cosine, "/query", query)[0] == 400


@pytest.mark.parametrize(
    "query",
    [
        {"topK": 10_001, "vector": [1.0, 0, 0, 0]},
        {"topK": 0, "vector": [1.0, 0, 0, 0]},
        {"topK": 3, "sparseVector": {"indices": [1], "values": [1.0]}},  # no dense part
        {"topK": 3, "vector": [1.0, 0]},
        {"topK": 3, "vector": [1.0, 0, 0, 0], "filter": {"repo": {"$regex": "a"}}},
        {"topK": 3, "vector": [1.0, 0, 0, 0], "filter": {"n": {"$gt": "1"}}},
        {"topK": 3, "vector": [1.0, 0, 0, 0], "filter": {"repo": {"$in": []}}},
        {"topK": 3, "vector": [1.0, 0, 0, 0], "includeEverything": True},
    ],
)
def test_invalid_queries_are_refused(fake: FakePinecone, query: dict[str, Any]) -> None:
    assert post(fake, "/query", query)[0] == 400


def test_stats_refuse_a_filter(fake: FakePinecone) -> None:
    assert post(fake, "/describe_index_stats", {"filter": {"a": 1}})[0] == 400


def sdk(fake: FakePinecone) -> Any:
    return Pinecone(api_key=fake.api_key, ssl_verify=False).index(host=fake.url)


def test_filters_and_hybrid_scores_through_the_sdk(fake: FakePinecone) -> None:
    index = sdk(fake)
    rows = [
        ("a", [1.0, 0, 0, 0], {"repo": "alpha", "n": 1, "tags": ["x", "y"], "ok": True}),
        ("b", [0, 1.0, 0, 0], {"repo": "beta", "n": 5, "tags": ["y"], "ok": False}),
        ("c", [0, 0, 1.0, 0], {"repo": "gamma", "n": 9}),
    ]
    index.upsert(
        vectors=[
            {
                "id": i,
                "values": v,
                "metadata": m,
                "sparse_values": {"indices": [7], "values": [2.0]},
            }
            for i, v, m in rows
        ]
    )

    def ids(flt: dict[str, Any]) -> list[str]:
        resp = index.query(top_k=10, vector=[1.0, 0.5, 0.25, 0], filter=flt)
        return [m.id for m in resp.matches]

    assert ids({"repo": "alpha"}) == ["a"]
    assert ids({"repo": {"$in": ["beta", "gamma"]}}) == ["b", "c"]
    assert ids({"repo": {"$nin": ["beta"]}}) == ["a", "c"]
    assert ids({"n": {"$gte": 5, "$lt": 9}}) == ["b"]
    assert ids({"$or": [{"n": {"$lte": 1}}, {"n": {"$gt": 8}}]}) == ["a", "c"]
    assert ids({"$and": [{"tags": "y"}, {"ok": {"$ne": True}}]}) == ["b"]
    assert ids({"ok": {"$eq": 1}}) == []  # true is not 1
    resp = index.query(
        top_k=1, vector=[0, 0, 0, 0.5], sparse_vector={"indices": [7], "values": [0.5]}
    )
    assert resp.matches[0].score == pytest.approx(1.0)  # 0 dense + 2.0 * 0.5 sparse


def test_list_pages_and_deletes(fake: FakePinecone) -> None:
    index = sdk(fake)
    index.upsert(vectors=[(f"p#{i:03d}", [0.1, 0, 0, 0]) for i in range(250)])
    index.upsert(vectors=[("q#1", [0.1, 0, 0, 0])])
    pages = list(index.list(prefix="p#"))
    assert [len(p.vectors) for p in pages] == [100, 100, 50]
    assert [v.id for p in pages for v in p.vectors] == [f"p#{i:03d}" for i in range(250)]
    index.delete(ids=["p#000", "p#001"])
    assert len(fake.records()) == 249
    index.delete(delete_all=True)
    assert fake.records() == {}


def test_faults_and_recording(fake: FakePinecone) -> None:
    index = sdk(fake)
    fake.fail_next(1, status=400, path="/vectors/delete")
    index.describe_index_stats()  # other paths are not failed
    with pytest.raises(ApiError):
        index.delete(ids=["x"])
    assert [(r.path, r.status) for r in fake.requests] == [
        ("/describe_index_stats", 200),
        ("/vectors/delete", 400),
    ]
    assert fake.requests[-1].body == {"namespace": "", "ids": ["x"]}
