"""A disposable on-disk cache of embedding vectors, keyed by a hash of what was embedded.

One SQLite file (by default `CODECITE_HOME/embeddings.sqlite`) maps a key
(`cache_key(model, dimensions, text)`) to a float32 vector. Re-ingesting code
that did not change, or re-embedding after an index is rebuilt, then costs
no API calls. The cache is only an optimisation: a damaged file is set aside and
started afresh (`bot.store.sqlite`), and no failure of the cache fails an ingest.
"""

from __future__ import annotations

import hashlib

from bot.store.embeddings import FILENAME, EmbeddingCache  # the storage (`stores.embedding_cache`)

__all__ = ["FILENAME", "EmbeddingCache", "cache_key"]


def cache_key(model: str, dimensions: int | None, text: str) -> str:
    """sha256 of model, requested dimensions ("" for the model's own) and text."""
    dims = "" if dimensions is None else str(dimensions)
    payload = f"{model}\x00{dims}\x00{text}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(payload).hexdigest()
