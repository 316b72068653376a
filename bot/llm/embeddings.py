"""The Embedder contract: many documents in batches, or one query.

Each call returns what it cost with its vectors, the way `LLM.complete` does:
an answer or an ingest adds up its own calls, so figures stay exact when many
run at once on one embedder.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from bot.models import Usage


@dataclass(frozen=True, slots=True)
class Embedded:
    """One vector per text, in order, and what this call cost.

    `tokens`: billed by the service for the requests this call sent (a text served
    from the cache, or repeated within the call, costs nothing). `tokens_saved`: the
    estimated tokens of the texts the cache served instead.
    """

    vectors: list[list[float]]
    tokens: int = 0
    tokens_saved: int = 0

    @property
    def usage(self) -> Usage:
        return Usage(embedding_tokens=self.tokens)


@dataclass(frozen=True, slots=True)
class EmbeddedQuery:
    """One query's vector and what embedding it cost (see Embedded)."""

    vector: list[float]
    tokens: int = 0
    tokens_saved: int = 0

    @property
    def usage(self) -> Usage:
        return Usage(embedding_tokens=self.tokens)


class Embedder(Protocol):
    model: str
    dimensions: int

    def embed_documents(self, texts: Sequence[str]) -> Embedded:
        """One vector per text, in order. Batches, caching and retries are the embedder's job."""

    def embed_query(self, text: str) -> EmbeddedQuery: ...
