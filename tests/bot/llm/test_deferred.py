"""Clients built by their first request (`bot.llm.deferred`), as `bot.wiring` makes them,
against the real openai SDK and the local fake."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.config import Settings
from bot.llm.chat import Message
from bot.wiring import make_embedder, make_llm
from tests.servers.openai_fake import FakeOpenAI

KEY = "sk-test-secret-key-0123456789"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(api_key=KEY, dimensions=16) as server:
        yield server


def settings(fake: FakeOpenAI, **env: str) -> Settings:
    return Settings(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=fake.base_url, **env)


def test_the_model_is_named_before_any_request_and_asked_at_the_first(fake):
    llm = make_llm(settings(fake, CODECITE_CHAT_MODEL="gpt-test"))
    assert llm is not None and llm.model == "gpt-test"
    assert fake.requests == []
    done = llm.complete([Message("user", "hello?")], max_tokens=20)
    assert done.text
    assert [r.path for r in fake.requests] == ["/v1/chat/completions"]
    assert fake.requests[0].body["model"] == "gpt-test"
    streamed = "".join(llm.stream([Message("user", "hello?")], max_tokens=20))
    assert streamed == done.text
    llm.close()


def test_configured_dimensions_need_no_request(fake, tmp_path):
    embedder = make_embedder(
        settings(fake, CODECITE_EMBED_MODEL="emb-test", CODECITE_EMBED_DIMENSIONS="16")
    )
    assert embedder is not None
    assert (embedder.model, embedder.dimensions) == ("emb-test", 16)
    assert fake.requests == []
    assert len(embedder.embed_query("retry webhooks").vector) == 16
    assert [r.path for r in fake.requests] == ["/v1/embeddings"]
    embedder.close()


def test_unconfigured_dimensions_are_learned_from_the_service(fake):
    embedder = make_embedder(settings(fake, CODECITE_EMBED_MODEL="emb-test"))
    assert embedder is not None
    assert embedder.dimensions == 16  # built and probed here
    assert [r.path for r in fake.requests] == ["/v1/embeddings"]
    embedder.close()


def test_closing_an_unused_client_builds_nothing(fake):
    llm = make_llm(settings(fake, CODECITE_CHAT_MODEL="gpt-test"))
    embedder = make_embedder(settings(fake, CODECITE_EMBED_MODEL="emb-test"))
    assert llm is not None and embedder is not None
    llm.close()  # type: ignore[attr-defined]
    embedder.close()  # type: ignore[attr-defined]
    assert (repr(llm), repr(embedder)) == (
        "DeferredChat('gpt-test')",
        "DeferredEmbedder('emb-test')",
    )
    llm.complete([Message("user", "hello?")], max_tokens=20)
    assert repr(llm).startswith("DeferredChat(OpenAIChat(model='gpt-test'")
