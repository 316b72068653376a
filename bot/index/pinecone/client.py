"""The Pinecone data plane as codecite uses it: batched, parallel, retried, translated.

The SDK's REST transport already retries 408/429/5xx a few times with jittered
backoff. On top of that, each call here runs under `bot.runtime.retry.Retrier` (a
shorter policy), so a longer throttling episode during a big ingest is ridden
out instead of failing the whole update. Everything the service refuses for
good (400, 401, 403, 404, ...) becomes a one-line StoreError; SDK exception
text never reaches a user.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, TypeVar

from pinecone import Index as SdkIndex
from pinecone.errors import (
    ApiError,
    ForbiddenError,
    NotFoundError,
    PineconeConnectionError,
    PineconeError,
    PineconeTimeoutError,
    RateLimitError,
    UnauthorizedError,
)
from pinecone.models.vectors.responses import DescribeIndexStatsResponse
from pinecone.models.vectors.vector import ScoredVector, Vector

from bot.errors import StoreError
from bot.index.pinecone.records import (
    MAX_DELETE_IDS,
    MAX_FETCH_IDS,
    QUERY_TOP_K_LIMIT,
    Record,
    id_batches,
    upsert_batches,
)
from bot.index.pinecone.sparse import SparseVector
from bot.runtime import metrics
from bot.runtime.retry import Retrier, Retry, RetryPolicy, is_retryable_status

log = logging.getLogger(__name__)

T = TypeVar("T")

# The SDK retries 3 times per call already; ours multiplies that, so keep it short.
DEFAULT_POLICY = RetryPolicy(max_attempts=3, base_delay=1.0, max_delay=10.0)


def classify(exc: BaseException) -> Retry | None:
    """Worth another try? Rate limits, server errors, timeouts and dropped connections."""
    if isinstance(exc, RateLimitError):
        return Retry(after=exc.retry_after)
    if isinstance(exc, ApiError):
        return Retry() if is_retryable_status(exc.status_code) else None
    if isinstance(exc, PineconeConnectionError | PineconeTimeoutError):
        return Retry()
    return None


def store_error(op: str, exc: PineconeError) -> StoreError:
    """One sentence for people, the status for logs; never the service's raw text."""
    if isinstance(exc, UnauthorizedError | ForbiddenError):
        message = "Pinecone rejected the API key; check PINECONE_API_KEY."
    elif isinstance(exc, NotFoundError):
        message = "The Pinecone index was not found; check PINECONE_INDEX or PINECONE_HOST."
    elif isinstance(exc, RateLimitError):
        message = "Pinecone is rate limiting codecite; please try again later."
    elif isinstance(exc, ApiError) and exc.status_code >= 500:
        message = "Pinecone is unavailable right now; please try again later."
    elif isinstance(exc, PineconeConnectionError | PineconeTimeoutError):
        message = "Pinecone could not be reached; please try again later."
    else:
        message = f"Pinecone refused the {op} request."
    status = getattr(exc, "status_code", None)
    code = getattr(exc, "error_code", None)
    detail = f"{op}: {type(exc).__name__}" + (f" {status}" if status else "")
    return StoreError(message, detail=detail + (f" {code}" if code else ""))


def _read_units(response: object) -> None:
    """What Pinecone billed a read, for the metrics (its responses carry `usage`)."""
    usage = getattr(response, "usage", None)
    units = getattr(usage, "read_units", None)
    if isinstance(units, int):
        metrics.pinecone_units(read=units)


class PineconeData:
    """One namespace of one index. Thread-safe (the SDK client is)."""

    def __init__(
        self,
        index: SdkIndex,
        *,
        namespace: str = "",
        retrier: Retrier | None = None,
        workers: int = 4,
    ) -> None:
        self.index = index
        self.namespace = namespace
        self._retrier = retrier or Retrier(DEFAULT_POLICY)
        self._workers = max(1, workers)

    def call(self, op: str, fn: Callable[[], T]) -> T:
        try:
            with metrics.timed_store("pinecone", op):
                return self._retrier.call(fn, classify, what=f"pinecone {op}")
        except PineconeError as exc:
            log.warning("pinecone %s failed: %s", op, type(exc).__name__)
            raise store_error(op, exc) from exc

    def upsert(self, records: Sequence[Record]) -> None:
        """Write records in size-bounded batches, a few requests at a time."""
        batches = list(upsert_batches(records, self.namespace))

        def send(batch: list[Record]) -> None:
            self.call("upsert", lambda: self.index.upsert(vectors=batch, namespace=self.namespace))
            metrics.pinecone_units(written=len(batch))

        self._parallel(send, batches)
        log.debug("upserted %d records in %d requests", len(records), len(batches))

    def delete(self, ids: Sequence[str]) -> None:
        unique = sorted(set(ids))

        def send(batch: list[str]) -> None:
            self.call("delete", lambda: self.index.delete(ids=batch, namespace=self.namespace))

        self._parallel(send, list(id_batches(unique, MAX_DELETE_IDS)))

    def fetch(self, ids: Sequence[str]) -> dict[str, Vector]:
        """Records by id; ids Pinecone does not hold are simply absent."""
        found: dict[str, Vector] = {}
        batches = list(id_batches(list(dict.fromkeys(ids)), MAX_FETCH_IDS))

        def get(batch: list[str]) -> None:
            resp = self.call("fetch", lambda: self.index.fetch(ids=batch, namespace=self.namespace))
            found.update(resp.vectors)  # dict.update is atomic under the GIL
            _read_units(resp)

        self._parallel(get, batches)
        return found

    def list_ids(self, prefix: str) -> list[str]:
        """Every record id starting with `prefix`, following pagination."""

        def pages() -> list[str]:
            ids: list[str] = []
            for page in self.index.list(prefix=prefix, namespace=self.namespace):
                ids.extend(item.id for item in page.vectors if item.id)
            return ids

        return self.call("list", pages)

    def query(
        self,
        *,
        top_k: int,
        vector: Sequence[float],
        sparse: SparseVector | None,
        filter: Mapping[str, Any],
    ) -> list[ScoredVector]:
        k = min(max(1, top_k), QUERY_TOP_K_LIMIT)
        sparse_arg = sparse.as_dict() if sparse is not None and len(sparse) else None

        def run() -> list[ScoredVector]:
            resp = self.index.query(
                top_k=k,
                vector=list(vector),
                sparse_vector=sparse_arg,
                filter=filter,
                namespace=self.namespace,
                include_metadata=True,
            )
            _read_units(resp)
            return list(resp.matches)

        return self.call("query", run)

    def ping(self) -> None:
        """StoreError unless Pinecone answers now: its index statistics, without our
        retries (a readiness check is asked again a few seconds later anyway)."""
        try:
            with metrics.timed_store("pinecone", "describe_index_stats"):
                self.index.describe_index_stats()
        except PineconeError as exc:
            log.warning("pinecone ping failed: %s", type(exc).__name__)
            raise store_error("describe_index_stats", exc) from exc

    def describe(self) -> DescribeIndexStatsResponse:
        return self.call("describe_index_stats", self.index.describe_index_stats)

    def namespace_count(self) -> int:
        stats = self.describe()
        key = self.namespace or "__default__"
        summary = stats.namespaces.get(key) or stats.namespaces.get(self.namespace)
        return summary.vector_count if summary is not None else 0

    def _parallel(self, fn: Callable[[T], None], items: Sequence[T]) -> None:
        """Run fn over items on a few threads; the first failure cancels what has not started."""
        if len(items) <= 1 or self._workers == 1:
            for item in items:
                fn(item)
            return
        with ThreadPoolExecutor(max_workers=min(self._workers, len(items))) as pool:
            futures = [pool.submit(fn, item) for item in items]
            try:
                for future in as_completed(futures):
                    future.result()
            except BaseException:
                for future in futures:
                    future.cancel()
                raise

    def close(self) -> None:
        self.index.close()
