"""One Pinecone index reached through the SDK: the client made by the first request (so
commands that read only the state never load the SDK), its data-plane client, the index
created or checked at start-up, its dimension and a readiness ping."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from bot.errors import ConfigError
from bot.runtime.retry import Retrier

if TYPE_CHECKING:
    from pinecone import Pinecone

    from bot.index.pinecone.client import PineconeData

DEFAULT_DIMENSION = 1536  # text-embedding-3-small, for an index created before any embedder


class PineconeConnection:
    def __init__(
        self,
        pc: Pinecone | Callable[[], Pinecone],
        *,
        name: str,
        host: str | None,
        namespace: str,
        dimension: int | None,
        retrier: Retrier | None,
        workers: int,
    ) -> None:
        self._make_pc = pc if callable(pc) else lambda: pc
        self._pc: Pinecone | None = None
        self.name = name
        self._host = host  # given (PINECONE_HOST) or found by init_index
        self._host_given = bool(host)
        self._namespace = namespace
        self._dimension = dimension
        self._retrier = retrier
        self._workers = workers
        self._data_client: PineconeData | None = None
        self._lock = threading.Lock()

    @property
    def label(self) -> str:
        """The index's name in a sentence."""
        return self.name or "(by host)"

    def client(self) -> Pinecone:
        with self._lock:
            if self._pc is None:
                self._pc = self._make_pc()
            return self._pc

    @property
    def data(self) -> PineconeData:
        from bot.index.pinecone.client import PineconeData

        pc = self.client()
        with self._lock:
            if self._data_client is None:
                sdk = pc.index(name=self.name if not self._host else "", host=self._host or "")
                self._data_client = PineconeData(
                    sdk, namespace=self._namespace, retrier=self._retrier, workers=self._workers
                )
            return self._data_client

    @property
    def dimension(self) -> int:
        """The index's dense dimension (asked of Pinecone once when not configured)."""
        if self._dimension is None:
            found = self.data.describe().dimension
            if not found:
                raise ConfigError(f"The Pinecone index {self.name!r} has no dense vectors.")
            self._dimension = found
        return self._dimension

    def init_index(self, dimension: int | None) -> None:
        """Create the index when missing (unless PINECONE_HOST is set); check its dimension.

        `None` adopts an existing index's dimension, or creates one at DEFAULT_DIMENSION.
        """
        from bot.index.pinecone.control import check_dimension, ensure_index, existing_dimension

        if self._host_given:
            found = self.data.describe().dimension
            if dimension is not None:
                check_dimension(self.label, found, dimension)
            self._dimension = dimension or found
            return
        pc = self.client()
        wanted = dimension or existing_dimension(pc, self.name) or DEFAULT_DIMENSION
        self._host = ensure_index(pc, self.name, wanted)
        self._dimension = wanted

    def ping(self) -> None:
        """StoreError unless Pinecone itself answers now."""
        self.data.ping()

    def close(self) -> None:
        if self._data_client is not None:
            self._data_client.close()
        if self._pc is not None:
            self._pc.close()
