"""The Embedder contract over any OpenAI-compatible `POST /embeddings` endpoint.

embed_documents does, in order: make every text acceptable (an input over the
per-input token limit is truncated, never rejected; an empty one becomes a
space), drop duplicates, serve what it can from the EmbeddingCache, pack the
misses into requests within the API's limits (2,048 inputs, 300,000 tokens),
send them a few at a time, store each batch in the cache as it lands (so a
failed ingest keeps what it paid for) and return one vector per input, in
order, with what the call cost: the tokens the service reported for the requests
it sent, and an estimate of those the cache spared. There is no running total to
read before and after: concurrent callers each get their own figures. Token
counts use bot.text.counting's estimate, which errs high.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass

import openai
from openai import omit

from bot.errors import ServiceUnavailable
from bot.llm.embedding_cache import cache_key
from bot.llm.embeddings import Embedded, EmbeddedQuery
from bot.llm.openai_chat import (
    classify_openai_error,
    openai_client,
    ping_endpoint,
    safe_url,
    translate_openai_error,
)
from bot.runtime import metrics
from bot.runtime.retry import Retrier, RetryPolicy
from bot.store.base import VectorCache
from bot.text.counting import count_tokens, truncate_to_tokens

log = logging.getLogger(__name__)

DEFAULT_MODEL = "text-embedding-3-small"
MAX_BATCH_INPUTS = 2048
MAX_INPUT_TOKENS = 8192
MAX_REQUEST_TOKENS = 300_000
_SERVICE = "embedding service"
_SETTING = "CODECITE_EMBED_MODEL"
_PROBE = "codecite dimension probe"


@dataclass(frozen=True, slots=True)
class _Batch:
    texts: tuple[str, ...]
    tokens: int  # estimated


@dataclass(frozen=True, slots=True)
class _Sent:
    vectors: list[list[float]]
    tokens: int  # as the service reported them, else estimated


class OpenAIEmbedder:
    """Embedder with batching, bounded concurrency, a content-hash cache and retries."""

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        dimensions: int | None = None,
        cache: VectorCache | None = None,
        timeout: float = 60.0,
        max_retries: int = 5,
        concurrency: int = 4,
        max_batch_inputs: int = MAX_BATCH_INPUTS,
        max_input_tokens: int = MAX_INPUT_TOKENS,
        max_request_tokens: int = MAX_REQUEST_TOKENS,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if max_retries < 0 or concurrency < 1 or max_batch_inputs < 1:
            raise ValueError("max_retries >= 0, concurrency >= 1 and max_batch_inputs >= 1")
        if not 1 <= max_input_tokens <= max_request_tokens:
            raise ValueError("need 1 <= max_input_tokens <= max_request_tokens")
        if dimensions is not None and dimensions < 1:
            raise ValueError("dimensions must be positive")
        self.model = model
        self.base_url = safe_url(base_url)
        self.cache = cache
        self.concurrency = concurrency
        self.max_batch_inputs = max_batch_inputs
        self.max_input_tokens = max_input_tokens
        self.max_request_tokens = max_request_tokens
        self._requested_dims = dimensions  # sent to the API and part of the cache key
        self._dims = dimensions
        self._client = openai_client(api_key=api_key, base_url=base_url, timeout=timeout)
        self._retrier = Retrier(RetryPolicy(max_attempts=max_retries + 1), sleep=sleep)
        self._lock = threading.Lock()
        self._calls = 0

    def __repr__(self) -> str:
        return (
            f"OpenAIEmbedder(model={self.model!r}, base_url={self.base_url!r}, "
            f"dimensions={self._dims!r})"
        )

    # properties ------------------------------------------------------------

    @property
    def calls(self) -> int:
        """Successful embedding requests made (a process-level count; usage comes per call)."""
        with self._lock:
            return self._calls

    @property
    def dimensions(self) -> int:
        """Vector size: as configured, else learned from the first reply (probing if needed)."""
        if self._dims is None:
            self.embed_query(_PROBE)
        assert self._dims is not None
        return self._dims

    @dimensions.setter
    def dimensions(self, value: int) -> None:
        self._dims = value

    # the Embedder contract -------------------------------------------------

    def embed_query(self, text: str) -> EmbeddedQuery:
        done = self.embed_documents([text])
        return EmbeddedQuery(done.vectors[0], done.tokens, done.tokens_saved)

    def embed_documents(self, texts: Sequence[str]) -> Embedded:
        if not texts:
            return Embedded([])
        prepared = [self._prepare(t) for t in texts]
        unique = list(dict.fromkeys(prepared))
        keys = {t: cache_key(self.model, self._requested_dims, t) for t in unique}
        vectors = self._from_cache(keys)
        saved = sum(count_tokens(t) for t in vectors)
        misses = [t for t in unique if t not in vectors]
        tokens = 0
        if misses:
            fresh, tokens = self._embed_misses(misses, keys)
            vectors.update(fresh)
        return Embedded([vectors[t] for t in prepared], tokens, saved)

    def ping(self) -> None:
        """ServiceError unless the endpoint answers a list of its models now (readiness)."""
        ping_endpoint(self._client)

    def close(self) -> None:
        """Release HTTP connections (the cache belongs to the caller)."""
        self._client.close()

    # steps -----------------------------------------------------------------

    def _prepare(self, text: str) -> str:
        if not text:
            return " "  # the API refuses empty strings
        if count_tokens(text) <= self.max_input_tokens:
            return text
        log.debug("truncating a %d-character input to %d tokens", len(text), self.max_input_tokens)
        return truncate_to_tokens(text, self.max_input_tokens)

    def _from_cache(self, keys: dict[str, str]) -> dict[str, list[float]]:
        if self.cache is None:
            return {}
        found = self.cache.get_many(keys.values())
        if found and self._dims is None:
            self._learn_dims(len(next(iter(found.values()))))
        # A vector of another size was made by another model under this name: a miss.
        return {t: found[k] for t, k in keys.items() if k in found and len(found[k]) == self._dims}

    def _embed_misses(
        self, misses: list[str], keys: dict[str, str]
    ) -> tuple[dict[str, list[float]], int]:
        """Vectors for texts the cache lacked, and the tokens their requests cost."""
        out: dict[str, list[float]] = {}
        tokens = 0
        out_lock = threading.Lock()

        def send_and_land(batch: _Batch) -> None:
            nonlocal tokens
            sent = self._send(batch)
            fresh = dict(zip(batch.texts, sent.vectors, strict=True))
            if self.cache is not None:  # at once, so a later failure keeps what was paid for
                self.cache.put_many({keys[t]: v for t, v in fresh.items()})
            with out_lock:
                out.update(fresh)
                tokens += sent.tokens

        batches = self._batches(misses)
        workers = min(self.concurrency, len(batches))
        if workers == 1:
            for batch in batches:
                send_and_land(batch)
            return out, tokens
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="embed") as pool:
            futures = [pool.submit(send_and_land, b) for b in batches]
            for future in wait(futures, return_when=FIRST_EXCEPTION).not_done:
                future.cancel()  # not started yet; requests in flight finish and land
        errors = [f.exception() for f in futures if not f.cancelled()]
        first = next((e for e in errors if e is not None), None)
        if first is not None:
            raise first
        return out, tokens

    def _batches(self, texts: list[str]) -> list[_Batch]:
        """Greedy packing in input order within the input-count and token limits."""
        batches: list[_Batch] = []
        current: list[str] = []
        tokens = 0
        for text in texts:
            cost = count_tokens(text)
            full = len(current) >= self.max_batch_inputs
            if current and (full or tokens + cost > self.max_request_tokens):
                batches.append(_Batch(tuple(current), tokens))
                current, tokens = [], 0
            current.append(text)
            tokens += cost
        if current:
            batches.append(_Batch(tuple(current), tokens))
        return batches

    def _send(self, batch: _Batch) -> _Sent:
        def create() -> openai.types.CreateEmbeddingResponse:
            return self._client.embeddings.create(
                model=self.model,
                input=list(batch.texts),
                dimensions=self._requested_dims if self._requested_dims is not None else omit,
            )

        try:
            with metrics.timed_model("embed", self.model):
                resp = self._retrier.call(create, classify_openai_error, what="embeddings")
        except openai.OpenAIError as exc:
            raise translate_openai_error(exc, service=_SERVICE, setting=_SETTING) from exc
        except ValueError as exc:  # the SDK's base64 decoding found no data
            raise _malformed("reply without embedding data") from exc
        vectors = self._check(resp, len(batch.texts))
        used = resp.usage.total_tokens if resp.usage and resp.usage.total_tokens else batch.tokens
        metrics.model_tokens("embed", self.model, embedding=used)
        with self._lock:
            self._calls += 1
        return _Sent(vectors, used)

    def _check(
        self, resp: openai.types.CreateEmbeddingResponse, expected: int
    ) -> list[list[float]]:
        """Vectors in input order, after checking the reply matches the request."""
        data = sorted(resp.data, key=lambda d: d.index)
        if len(data) != expected or [d.index for d in data] != list(range(expected)):
            raise _malformed(f"{len(data)} vectors for {expected} inputs")
        vectors = [list(d.embedding) for d in data]
        sizes = {len(v) for v in vectors}
        if len(sizes) != 1 or 0 in sizes:
            raise _malformed(f"vector sizes {sorted(sizes)}")
        self._learn_dims(sizes.pop())
        return vectors

    def _learn_dims(self, size: int) -> None:
        with self._lock:
            if self._dims is None:
                self._dims = size
            elif self._dims != size:
                raise _malformed(f"{size}-dimensional vectors where {self._dims} were expected")


def _malformed(detail: str) -> ServiceUnavailable:
    log.warning("embedding reply rejected: %s", detail)
    return ServiceUnavailable(
        "The embedding service returned unusable vectors; an admin should check "
        "CODECITE_EMBED_MODEL and CODECITE_EMBED_DIMENSIONS.",
        detail=detail,
    )
