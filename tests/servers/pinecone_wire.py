"""What the fake Pinecone accepts and how it scores: the service's limits, kept strict.

Every check raises `WireError(status, message)`; the server turns it into the
service's error body. Limits follow Pinecone's documented operation limits:
1,000 records and 2 MB per upsert, 40 KB of metadata per record and no null
values, ids of at most 512 ASCII characters, at most 1,000 non-zeros in a
sparse vector (indices and values of equal length, unique uint32 indices),
dense vectors of the index's dimension with at least one non-zero value,
sparse queries only on a dotproduct index with a sparse field, topK <= 10,000,
1,000 ids per fetch or delete, list pages of at most 100.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MAX_UPSERT_RECORDS = 1000
MAX_UPSERT_BYTES = 2 * 1024 * 1024
MAX_METADATA_BYTES = 40 * 1024
MAX_ID = 512
MAX_SPARSE = 1000
MAX_TOP_K = 10_000
MAX_IDS = 1000
MAX_LIST_LIMIT = 100
MAX_IN_VALUES = 10_000

_COMPARE = {"$gt", "$gte", "$lt", "$lte"}
_LIST_OPS = {"$in", "$nin"}
_FIELD_OPS = {"$eq", "$ne", "$exists", *_COMPARE, *_LIST_OPS}


class WireError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def bad(message: str) -> WireError:
    return WireError(400, message)


@dataclass(frozen=True)
class IndexConfig:
    name: str
    dimension: int
    metric: str = "dotproduct"
    sparse: bool = True  # has a `_sparse_values` field


@dataclass
class Stored:
    values: list[float]
    sparse: dict[int, float] | None
    metadata: dict[str, Any] | None

    def wire(self, rid: str, *, values: bool = True, metadata: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {"id": rid, "values": self.values if values else []}
        if values and self.sparse is not None:
            out["sparseValues"] = {
                "indices": list(self.sparse),
                "values": list(self.sparse.values()),
            }
        if metadata and self.metadata is not None:
            out["metadata"] = self.metadata
        return out


def json_size(obj: Any) -> int:
    return len(json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def require_keys(body: Any, allowed: set[str], what: str) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise bad(f"{what} must be a JSON object")
    unknown = set(body) - allowed
    if unknown:
        raise bad(f"{what} has unknown fields: {sorted(unknown)}")
    return body


def check_id(rid: Any) -> str:
    if not isinstance(rid, str) or not rid:
        raise bad("Vector ID must be a non-empty string")
    if len(rid) > MAX_ID:
        raise bad(f"Vector ID exceeds the maximum length of {MAX_ID} characters")
    if not rid.isascii() or "\x00" in rid:
        raise bad("Vector ID must be ASCII without NUL")
    return rid


def check_dense(values: Any, config: IndexConfig, what: str) -> list[float]:
    if not isinstance(values, list) or not all(_is_number(v) for v in values):
        raise bad(f"{what} must be a list of numbers")
    if len(values) != config.dimension:
        raise bad(
            f"{what} dimension {len(values)} does not match the dimension of the index "
            f"{config.dimension}"
        )
    return [float(v) for v in values]


def check_sparse(raw: Any, config: IndexConfig) -> dict[int, float]:
    if not config.sparse:
        raise bad("Index configuration does not support sparse values")
    body = require_keys(raw, {"indices", "values"}, "sparseValues")
    indices, values = body.get("indices"), body.get("values")
    if not isinstance(indices, list) or not isinstance(values, list):
        raise bad("sparseValues needs indices and values lists")
    if len(indices) != len(values):
        raise bad("Sparse vector indices and values must have the same length")
    if not indices:
        raise bad("Sparse vector must contain at least one value")
    if len(indices) > MAX_SPARSE:
        raise bad(f"Sparse vector size {len(indices)} exceeds the maximum size of {MAX_SPARSE}")
    if not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < 2**32 for i in indices):
        raise bad("Sparse vector indices must be uint32")
    if len(set(indices)) != len(indices):
        raise bad("Sparse vector indices must be unique")
    if not all(_is_number(v) and math.isfinite(v) for v in values):
        raise bad("Sparse vector values must be finite numbers")
    return {int(i): float(v) for i, v in zip(indices, values, strict=True)}


def check_metadata(raw: Any) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise bad("Metadata must be a JSON object")
    for key, value in raw.items():
        if value is None:
            raise bad(f"Metadata value for field {key!r} is null; null values are not supported")
        ok = isinstance(value, str | bool) or _is_number(value)
        ok = ok or (isinstance(value, list) and all(isinstance(v, str) for v in value))
        if not ok:
            raise bad(f"Metadata value for field {key!r} must be a string, number, bool or list")
    size = json_size(raw)
    if size > MAX_METADATA_BYTES:
        raise bad(f"Metadata size is {size} bytes, which exceeds the limit of 40960 bytes")
    return raw


def check_record(raw: Any, config: IndexConfig) -> tuple[str, Stored]:
    body = require_keys(raw, {"id", "values", "sparseValues", "metadata"}, "vector")
    rid = check_id(body.get("id"))
    values = check_dense(body.get("values"), config, f"Vector {rid!r}")
    if not any(values):
        raise bad(f"Dense vectors must contain at least one non-zero value. Vector ID {rid!r}")
    sparse = check_sparse(body["sparseValues"], config) if "sparseValues" in body else None
    metadata = check_metadata(body["metadata"]) if "metadata" in body else None
    return rid, Stored(values, sparse, metadata)


def check_ids(raw: Any) -> list[str]:
    if not isinstance(raw, list) or not raw:
        raise bad("ids must be a non-empty list")
    if len(raw) > MAX_IDS:
        raise bad(f"Too many ids: {len(raw)} exceeds the limit of {MAX_IDS}")
    return [check_id(i) for i in raw]


# -- queries and listings ----------------------------------------------------------------


def check_query(body: Any, config: IndexConfig) -> dict[str, Any]:
    allowed = {"topK", "namespace", "vector", "sparseVector", "id", "filter"}
    body = require_keys(body, allowed | {"includeValues", "includeMetadata"}, "query")
    top_k = body.get("topK")
    if not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise bad(f"topK must be between 1 and {MAX_TOP_K}")
    if "vector" not in body and "id" not in body:
        raise bad("A dense index query needs a vector or an id")
    if "vector" in body:
        check_dense(body["vector"], config, "Query vector")
    if "id" in body:
        check_id(body["id"])
    if "sparseVector" in body:
        if config.metric != "dotproduct":
            raise bad("Sparse vectors are only supported on indexes with the dotproduct metric")
        check_sparse(body["sparseVector"], config)
    if body.get("filter") is not None:
        check_filter(body["filter"])
    return body


def rank(config: IndexConfig, space: Mapping[str, Stored], query: dict[str, Any]) -> list[Any]:
    """The top-k matches of a checked query, best first (ties by id, for determinism)."""
    if "id" in query:
        stored = space.get(query["id"])
        dense = stored.values if stored is not None else [0.0] * config.dimension
    else:
        dense = [float(v) for v in query["vector"]]
    sparse = check_sparse(query["sparseVector"], config) if "sparseVector" in query else None
    flt = query.get("filter")
    found = [
        (score(config, rec, dense, sparse), rid)
        for rid, rec in space.items()
        if flt is None or matches(flt, rec.metadata or {})
    ]
    found.sort(key=lambda item: (-item[0], item[1]))
    values, meta = bool(query.get("includeValues")), bool(query.get("includeMetadata"))
    return [
        {**space[rid].wire(rid, values=values, metadata=meta), "score": s}
        for s, rid in found[: query["topK"]]
    ]


def list_page(ids: Iterable[str], params: Mapping[str, list[str]]) -> dict[str, Any]:
    """One page of ids by prefix, in id order; the token is the last id returned."""
    prefix = params.get("prefix", [""])[0]
    limit = int(params.get("limit", [str(MAX_LIST_LIMIT)])[0])
    if not 1 <= limit <= MAX_LIST_LIMIT:
        raise bad(f"limit must be between 1 and {MAX_LIST_LIMIT}")
    after = ""
    if "paginationToken" in params:
        after = base64.urlsafe_b64decode(params["paginationToken"][0]).decode()
    chosen = sorted(r for r in ids if r.startswith(prefix) and r > after)
    page = chosen[:limit]
    out: dict[str, Any] = {"vectors": [{"id": r} for r in page]}
    if len(chosen) > limit:
        out["pagination"] = {"next": base64.urlsafe_b64encode(page[-1].encode()).decode()}
    return out


# -- the control plane -----------------------------------------------------------------


def config_from_create(body: Any) -> IndexConfig:
    """The index a 2026-07 create request asks for (a `_values` field, maybe `_sparse_values`)."""
    allowed = {"name", "schema", "deployment", "deletion_protection", "tags"}
    body = require_keys(body, allowed, "create index")
    name, fields = body.get("name"), (body.get("schema") or {}).get("fields")
    if not isinstance(name, str) or not isinstance(fields, dict):
        raise bad("create index needs a name and schema.fields")
    dense = fields.get("_values") or {}
    if dense.get("type") != "dense_vector" or not isinstance(dense.get("dimension"), int):
        raise bad("schema needs a _values dense_vector field with a dimension")
    sparse = fields.get("_sparse_values", {}).get("type") == "sparse_vector"
    return IndexConfig(name, dense["dimension"], dense.get("metric", "cosine"), sparse)


def index_model(config: IndexConfig, host: str) -> dict[str, Any]:
    """The control plane's description of an index, as `GET /indexes/{name}` answers."""
    fields: dict[str, Any] = {
        "_values": {"type": "dense_vector", "dimension": config.dimension, "metric": config.metric}
    }
    if config.sparse:
        fields["_sparse_values"] = {"type": "sparse_vector"}
    return {
        "name": config.name,
        "host": host,
        "status": {"ready": True, "state": "Ready"},
        "schema": {"fields": fields},
        "deployment": {"deployment_type": "managed", "cloud": "aws", "region": "us-east-1"},
        "deletion_protection": "disabled",
        "tags": None,
    }


# -- filters -------------------------------------------------------------------------


def check_filter(flt: Any) -> None:
    """Reject what the service rejects: unknown operators, wrong operand types."""
    if not isinstance(flt, dict) or not flt:
        raise bad("Filter must be a non-empty JSON object")
    for key, cond in flt.items():
        if key in ("$and", "$or"):
            if not isinstance(cond, list) or not cond:
                raise bad(f"{key} needs a non-empty list")
            for part in cond:
                check_filter(part)
        elif key.startswith("$"):
            raise bad(f"Unknown filter operator {key}")
        elif isinstance(cond, dict):
            for op, arg in cond.items():
                _check_operand(op, arg)
        else:
            _check_operand("$eq", cond)


def _check_operand(op: str, arg: Any) -> None:
    if op not in _FIELD_OPS:
        raise bad(f"Unknown filter operator {op}")
    if op in _LIST_OPS:
        if not isinstance(arg, list) or not arg or len(arg) > MAX_IN_VALUES:
            raise bad(f"{op} needs a non-empty list of at most {MAX_IN_VALUES} values")
    elif op in _COMPARE:
        if not _is_number(arg):
            raise bad(f"{op} needs a number")
    elif op == "$exists":
        if not isinstance(arg, bool):
            raise bad("$exists needs a boolean")
    elif not (isinstance(arg, str | bool) or _is_number(arg)):
        raise bad(f"{op} needs a string, number or boolean")


def matches(flt: Mapping[str, Any], metadata: Mapping[str, Any]) -> bool:
    for key, cond in flt.items():
        if key == "$and":
            ok = all(matches(part, metadata) for part in cond)
        elif key == "$or":
            ok = any(matches(part, metadata) for part in cond)
        else:
            ops = cond if isinstance(cond, dict) else {"$eq": cond}
            ok = all(_field(op, arg, key in metadata, metadata.get(key)) for op, arg in ops.items())
        if not ok:
            return False
    return True


def _field(op: str, arg: Any, present: bool, value: Any) -> bool:
    if op == "$exists":
        return present is arg
    values = value if isinstance(value, list) else [value]
    if op == "$eq":
        return present and any(_same(v, arg) for v in values)
    if op == "$ne":
        return not present or not any(_same(v, arg) for v in values)
    if op == "$in":
        return present and any(_same(v, a) for v in values for a in arg)
    if op == "$nin":
        return not present or not any(_same(v, a) for v in values for a in arg)
    if not present or not _is_number(value):
        return False
    return {
        "$gt": value > arg,
        "$gte": value >= arg,
        "$lt": value < arg,
        "$lte": value <= arg,
    }[op]


def _same(a: Any, b: Any) -> bool:
    """Equal and of the same kind: True is not 1, "1" is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return a == b


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


# -- scoring -------------------------------------------------------------------------


def score(
    config: IndexConfig,
    record: Stored,
    dense: Sequence[float],
    sparse: Mapping[int, float] | None,
) -> float:
    """The index metric over dense values, plus the sparse dot product (dotproduct only)."""
    dot = sum(a * b for a, b in zip(record.values, dense, strict=True))
    if config.metric == "cosine":
        norms = math.sqrt(sum(a * a for a in record.values)) * math.sqrt(sum(b * b for b in dense))
        return dot / norms if norms else 0.0
    if config.metric == "euclidean":
        return -math.dist(record.values, dense)
    if sparse and record.sparse:
        dot += sum(v * record.sparse.get(i, 0.0) for i, v in sparse.items())
    return dot
