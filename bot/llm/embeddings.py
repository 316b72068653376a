"""The Embedder contract: many documents in batches, or one query."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Embedder(Protocol):
    model: str
    dimensions: int

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order. Batches, caching and retries are the embedder's job."""

    def embed_query(self, text: str) -> list[float]: ...

    @property
    def tokens_used(self) -> int:
        """Embedding tokens sent to the service by this embedder so far."""
