"""Pinecone's control plane, as far as codecite needs it: make sure the index exists and fits.

codecite wants a serverless index with a dense field (`_values`, dotproduct, as
wide as the embedder's vectors) and a sparse field (`_sparse_values`): the
2026-07 API serves such an index through the vectors API (upsert/query), and
hybrid scoring needs both the sparse field and the dotproduct metric. An index
created without the sparse field accepts the create but refuses sparse writes
later, so an existing index is checked, not trusted.
"""

from __future__ import annotations

import logging
from typing import Any

from pinecone import Pinecone
from pinecone.errors import NotFoundError, PineconeError
from pinecone.models.indexes.index import IndexModel
from pinecone.models.indexes.schema import DenseVectorField, SparseVectorField

from bot.errors import ConfigError
from bot.index.pinecone.client import store_error

log = logging.getLogger(__name__)

DENSE_FIELD = "_values"
SPARSE_FIELD = "_sparse_values"
METRIC = "dotproduct"


def index_schema(dimension: int) -> dict[str, Any]:
    return {
        "fields": {
            DENSE_FIELD: {"type": "dense_vector", "dimension": dimension, "metric": METRIC},
            SPARSE_FIELD: {"type": "sparse_vector"},
        }
    }


def existing_dimension(pc: Pinecone, name: str) -> int | None:
    """The dense dimension of the index `name`, or None when there is no such index."""
    try:
        return pc.indexes.describe(name).dimension
    except NotFoundError:
        return None
    except PineconeError as exc:
        raise store_error("describe index", exc) from exc
    except AttributeError as exc:  # the schema has no single dense field
        raise ConfigError(f"The Pinecone index {name!r} is not a vector index.") from exc


def ensure_index(
    pc: Pinecone,
    name: str,
    dimension: int,
    *,
    cloud: str = "aws",
    region: str = "us-east-1",
    timeout: int = 300,
) -> str:
    """Create the serverless index when missing, check it when present; returns its host."""
    if dimension < 1:
        raise ConfigError("The embedding dimension must be a positive number.")
    try:
        model = _describe(pc, name)
        if model is None:
            log.info("creating Pinecone index %s (dimension %d, %s)", name, dimension, METRIC)
            model = pc.indexes.create(
                name=name,
                schema=index_schema(dimension),
                deployment={"deployment_type": "managed", "cloud": cloud, "region": region},
                timeout=timeout,
            )
    except PineconeError as exc:
        raise store_error("create index", exc) from exc
    check_model(model, dimension)
    if not model.host:
        raise ConfigError(f"The Pinecone index {name!r} has no host yet; try again shortly.")
    return model.host


def _describe(pc: Pinecone, name: str) -> IndexModel | None:
    try:
        return pc.indexes.describe(name)
    except NotFoundError:
        return None


def check_model(model: IndexModel, dimension: int) -> None:
    """ConfigError unless the index has our dense field at `dimension` and a sparse field."""
    fields = model.schema.fields
    dense = fields.get(DENSE_FIELD)
    if not isinstance(dense, DenseVectorField):
        raise ConfigError(
            f"The Pinecone index {model.name!r} is not a dense vector index; "
            "use a new PINECONE_INDEX name."
        )
    check_dimension(model.name, dense.dimension, dimension)
    if dense.metric != METRIC or not isinstance(fields.get(SPARSE_FIELD), SparseVectorField):
        raise ConfigError(
            f"The Pinecone index {model.name!r} cannot do hybrid search (it needs the "
            f"{METRIC} metric and a sparse field); use a new PINECONE_INDEX name."
        )


def check_dimension(name: str, actual: int | None, wanted: int) -> None:
    if actual is not None and actual != wanted:
        raise ConfigError(
            f"The Pinecone index {name!r} holds {actual}-dimensional vectors but the "
            f"embedding model makes {wanted}-dimensional ones; use a new PINECONE_INDEX "
            "name or the matching model."
        )
