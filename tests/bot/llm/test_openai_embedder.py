"""OpenAIEmbedder against the real openai SDK and the strict local fake."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from bot.errors import ServiceError, ServiceUnavailable
from bot.llm.embedding_cache import EmbeddingCache
from bot.llm.embeddings import Embedder
from bot.llm.openai_embedder import OpenAIEmbedder
from bot.text.counting import count_tokens
from tests.servers.openai_fake import FakeOpenAI
from tests.servers.openai_wire import fake_embedding

MODEL = "text-embedding-3-small"

Make = Callable[..., OpenAIEmbedder]


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[EmbeddingCache]:
    with EmbeddingCache(tmp_path / "embeddings.sqlite") as c:
        yield c


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def make(fake: FakeOpenAI, sleeps: list[float]) -> Iterator[Make]:
    made: list[OpenAIEmbedder] = []

    def factory(**kwargs: object) -> OpenAIEmbedder:
        options: dict[str, object] = {"api_key": "k", "base_url": fake.base_url, "timeout": 5}
        options.update(kwargs)
        embedder = OpenAIEmbedder(MODEL, sleep=sleeps.append, **options)  # type: ignore[arg-type]
        made.append(embedder)
        return embedder

    yield factory
    for embedder in made:
        embedder.close()


def sent_inputs(fake: FakeOpenAI) -> list[list[str]]:
    return [b["input"] for b in fake.bodies("/embeddings")]


def close_to(got: list[float], text: str, dims: int = 64) -> bool:
    return bool(np.allclose(got, fake_embedding(text, dims), atol=1e-6))


def test_implements_the_embedder_protocol(make: Make) -> None:
    embedder: Embedder = make()
    assert embedder.model == MODEL


def test_base64_default_is_decoded_right(make: Make, fake: FakeOpenAI) -> None:
    texts = ["def charge(invoice): ...", "class RetryPolicy:", "README"]
    vectors = make().embed_documents(texts).vectors
    assert fake.bodies("/embeddings")[0]["encoding_format"] == "base64"
    assert all(close_to(v, t) for v, t in zip(vectors, texts, strict=True))
    assert all(isinstance(x, float) for x in vectors[0])


def test_empty_list_makes_no_call(make: Make, fake: FakeOpenAI) -> None:
    assert make().embed_documents([]).vectors == []
    assert fake.requests == []


def test_batches_split_at_2048_inputs(make: Make, fake: FakeOpenAI) -> None:
    texts = [f"function_{i}()" for i in range(5000)]
    embedder = make()
    vectors = embedder.embed_documents(texts).vectors
    # batches go out concurrently, so they may arrive in any order
    assert sorted(len(batch) for batch in sent_inputs(fake)) == [904, 2048, 2048]
    assert embedder.calls == 3
    assert len(vectors) == 5000
    assert close_to(vectors[0], texts[0]) and close_to(vectors[4321], texts[4321])
    assert fake.embedding_inputs == 5000


def test_batches_split_at_the_request_token_limit(make: Make, fake: FakeOpenAI) -> None:
    # Punctuation-dense code is estimated at ~0.7 tokens a character, so 40 of these
    # (about 7,850 tokens each) cannot share one request.
    texts = [f"doc {i} " + "(){}[];" * 1600 for i in range(40)]
    assert 7000 < count_tokens(texts[0]) <= 8192
    vectors = make(concurrency=2).embed_documents(texts).vectors
    batches = sent_inputs(fake)
    assert len(batches) == 2
    assert all(sum(count_tokens(t) for t in b) <= 300_000 for b in batches)
    assert sorted(t for b in batches for t in b) == sorted(texts)
    assert [r.status for r in fake.requests] == [200, 200]
    assert close_to(vectors[39], texts[39])


def test_overlong_input_is_truncated_not_rejected(make: Make, fake: FakeOpenAI) -> None:
    long_text = "".join(f"value_{i} = compute({i})\n" for i in range(12000))
    assert count_tokens(long_text) > 8192
    (vector,) = make().embed_documents([long_text]).vectors
    (sent,) = sent_inputs(fake)[0]
    assert long_text.startswith(sent)
    assert count_tokens(sent) <= 8192
    assert close_to(vector, sent)


def test_empty_text_is_sent_as_a_space(make: Make, fake: FakeOpenAI) -> None:
    vectors = make().embed_documents(["", "x"]).vectors
    assert sent_inputs(fake) == [[" ", "x"]]
    assert len(vectors) == 2


def test_order_preserved_with_duplicates(make: Make, fake: FakeOpenAI) -> None:
    texts = ["alpha", "beta", "alpha", "gamma", "beta"]
    vectors = make().embed_documents(texts).vectors
    assert sent_inputs(fake) == [["alpha", "beta", "gamma"]]
    assert vectors[0] == vectors[2] and vectors[1] == vectors[4]
    assert all(close_to(v, t) for v, t in zip(vectors, texts, strict=True))


def test_cache_makes_a_repeat_free(make: Make, fake: FakeOpenAI, cache: EmbeddingCache) -> None:
    texts = [f"def handler_{i}(event): return {i}" for i in range(30)]
    embedder = make(cache=cache)
    first = embedder.embed_documents(texts)
    (served,) = fake.embeddings_served
    assert first.tokens == served.total_tokens > 0 and first.tokens_saved == 0
    second = embedder.embed_documents(texts)
    assert second.vectors == first.vectors
    assert embedder.calls == 1  # no new request
    assert second.tokens == 0  # a cached text costs nothing
    assert second.tokens_saved == sum(count_tokens(t) for t in texts)


def test_each_call_reports_the_usage_the_service_returned(make: Make, fake: FakeOpenAI) -> None:
    # Three batches sent concurrently: the call's tokens are the sum of their replies' usage.
    texts = [f"def step_{i}(state): return state + {i} * {i}" for i in range(25)]
    done = make(concurrency=3, max_batch_inputs=10).embed_documents(texts)
    served = fake.embeddings_served
    assert len(served) == 3
    assert done.tokens == sum(s.total_tokens for s in served) > 0
    assert done.usage.embedding_tokens == done.tokens and done.usage.prompt_tokens == 0


def test_a_text_repeated_within_a_call_is_paid_once(make: Make, fake: FakeOpenAI) -> None:
    done = make().embed_documents(["same words here", "other", "same words here"])
    (served,) = fake.embeddings_served
    assert served.inputs == ("same words here", "other")
    assert done.tokens == served.total_tokens == sum(served.input_tokens)


def test_a_partly_cached_call_pays_only_for_its_misses(
    make: Make, fake: FakeOpenAI, cache: EmbeddingCache
) -> None:
    embedder = make(cache=cache)
    embedder.embed_documents(["known text"])
    done = embedder.embed_documents(["known text", "a brand new text"])
    last = fake.embeddings_served[-1]
    assert last.inputs == ("a brand new text",)
    assert done.tokens == last.total_tokens
    assert done.tokens_saved == count_tokens("known text")


def test_a_query_reports_its_own_tokens(make: Make, fake: FakeOpenAI) -> None:
    query = make().embed_query("where do we retry failed webhooks?")
    (served,) = fake.embeddings_served
    assert served.inputs == ("where do we retry failed webhooks?",)
    assert query.tokens == served.total_tokens > 0


def test_only_misses_are_sent(make: Make, fake: FakeOpenAI, cache: EmbeddingCache) -> None:
    embedder = make(cache=cache)
    embedder.embed_documents(["old one", "old two"])
    vectors = embedder.embed_documents(["old two", "new one", "old one"]).vectors
    assert sent_inputs(fake) == [["old one", "old two"], ["new one"]]
    assert all(close_to(v, t) for v, t in zip(vectors, ["old two", "new one", "old one"]))


def test_cache_survives_reopen(make: Make, fake: FakeOpenAI, tmp_path: Path) -> None:
    path = tmp_path / "home" / "embeddings.sqlite"
    texts = ["persist me", "and me"]
    with EmbeddingCache(path) as cache:
        first = make(cache=cache).embed_documents(texts).vectors
    with EmbeddingCache(path) as cache:
        embedder = make(cache=cache)
        assert embedder.embed_documents(texts).vectors == first
        assert embedder.calls == 0
        assert embedder.dimensions == 64  # learned from the cache, no probe needed
    assert len(fake.requests) == 1


def test_cache_key_includes_dimensions(make: Make, fake: FakeOpenAI, cache: EmbeddingCache) -> None:
    make(cache=cache).embed_documents(["same text"])
    (vector,) = make(cache=cache, dimensions=16).embed_documents(["same text"]).vectors
    assert len(vector) == 16
    assert len(fake.requests) == 2
    assert fake.bodies("/embeddings")[1]["dimensions"] == 16


def test_corrupt_cache_file_does_not_fail_the_ingest(
    make: Make, fake: FakeOpenAI, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "embeddings.sqlite"
    path.write_bytes(b"\x00garbage" * 512)
    with caplog.at_level(logging.WARNING), EmbeddingCache(path) as cache:
        vectors = make(cache=cache).embed_documents(["still works"]).vectors
        assert close_to(vectors[0], "still works")
        assert len(cache) == 1
    assert "embedding cache" in caplog.text


def test_concurrency_is_bounded(make: Make, fake: FakeOpenAI) -> None:
    fake.gate(3)  # each request waits until three are in flight at once
    texts = [f"text number {i}" for i in range(100)]
    vectors = make(concurrency=3, max_batch_inputs=10).embed_documents(texts).vectors
    assert len(sent_inputs(fake)) == 10
    assert fake.in_flight_peak == 3  # reached, never exceeded
    assert all(close_to(v, t) for v, t in zip(vectors, texts, strict=True))


def test_rate_limit_is_retried(make: Make, fake: FakeOpenAI, sleeps: list[float]) -> None:
    fake.fail_next(429, count=2, retry_after=0.5)
    vectors = make().embed_documents(["retry me"]).vectors
    assert close_to(vectors[0], "retry me")
    assert sleeps == [0.5, 0.5]


def test_failed_batch_keeps_earlier_batches_cached(
    make: Make, fake: FakeOpenAI, cache: EmbeddingCache
) -> None:
    texts = [f"chunk {i}" for i in range(6)]
    embedder = make(cache=cache, concurrency=1, max_batch_inputs=2, max_retries=1)
    embedder.embed_documents(texts[:2])  # first batch lands
    fake.fail_next(500, count=2)
    with pytest.raises(ServiceError) as info:
        embedder.embed_documents(texts)
    assert "embedding service" in info.value.user_message
    assert len(cache) == 2
    embedder.embed_documents(texts)
    assert sent_inputs(fake)[-2:] == [["chunk 2", "chunk 3"], ["chunk 4", "chunk 5"]]


def test_concurrent_failure_is_raised_and_successes_cached(
    make: Make, fake: FakeOpenAI, cache: EmbeddingCache
) -> None:
    fake.fail_next(400)  # one batch is refused outright
    texts = [f"item {i}" for i in range(40)]
    embedder = make(cache=cache, concurrency=4, max_batch_inputs=10)
    with pytest.raises(ServiceUnavailable):
        embedder.embed_documents(texts)
    assert len(cache) == 10 * (len(sent_inputs(fake)) - 1)  # every accepted batch was kept


def test_wrong_key_is_unavailable(fake: FakeOpenAI) -> None:
    with FakeOpenAI(api_key="sk-right") as strict:
        embedder = OpenAIEmbedder(MODEL, api_key="sk-wrong-0000", base_url=strict.base_url)
        with pytest.raises(ServiceUnavailable) as info:
            embedder.embed_documents(["x"])
        embedder.close()
    assert "OPENAI_API_KEY" in info.value.user_message
    assert "sk-wrong" not in str(info.value) and "sk-wrong" not in repr(embedder)


def test_dimensions_given_are_sent(make: Make, fake: FakeOpenAI) -> None:
    embedder = make(dimensions=24)
    assert embedder.dimensions == 24
    (vector,) = embedder.embed_documents(["sized"]).vectors
    assert len(vector) == 24
    assert fake.bodies("/embeddings")[0]["dimensions"] == 24


def test_dimensions_learned_or_probed(make: Make, fake: FakeOpenAI) -> None:
    learned = make()
    learned.embed_query("what calls charge()?")
    assert learned.dimensions == 64
    assert len(fake.requests) == 1
    probed = make()
    assert probed.dimensions == 64  # one small request to find out
    assert len(fake.requests) == 2
    assert "dimensions" not in fake.bodies("/embeddings")[1]


def test_embed_query_matches_documents(make: Make) -> None:
    embedder = make()
    query = embedder.embed_query("retry webhook")
    assert query.vector == embedder.embed_documents(["retry webhook"]).vectors[0]


def test_keyless_local_server(fake: FakeOpenAI) -> None:
    embedder = OpenAIEmbedder("nomic-embed-text", api_key=None, base_url=fake.base_url)
    assert len(embedder.embed_query("hello").vector) == 64
    embedder.close()
    assert fake.requests[0].headers["authorization"] == "Bearer unused"
    assert fake.bodies("/embeddings")[0]["model"] == "nomic-embed-text"


def test_vectors_of_a_changed_size_are_refused(make: Make, fake: FakeOpenAI) -> None:
    embedder = make()
    embedder.embed_query("first")
    fake.dimensions = 32  # the server now serves another model under the same name
    with pytest.raises(ServiceUnavailable) as info:
        embedder.embed_query("second")
    assert "CODECITE_EMBED_MODEL" in info.value.user_message
    assert embedder.dimensions == 64
