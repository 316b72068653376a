"""A model or embedder whose client is built by its first request, not at start.

    llm = DeferredChat("gpt-4o-mini", build_openai_chat)   # nothing imported yet
    llm.model                                                # known without the client
    llm.complete(messages, max_tokens=400)                   # built (openai imported) here

The openai SDK takes longer to import than the rest of `codecite status` together,
and most commands never ask a model anything: they read the model's name at most.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from bot.llm.chat import LLM, Completion, Message
from bot.llm.embeddings import Embedded, EmbeddedQuery, Embedder
from bot.runtime.once import Once

SERVICE = "the model endpoint"  # what a readiness probe's sentence calls it


class DeferredChat:
    def __init__(self, model: str, build: Callable[[], LLM]) -> None:
        self.model = model
        self._llm = Once(build)

    def __repr__(self) -> str:
        return f"DeferredChat({self._llm.built() or self.model!r})"

    def complete(self, messages: Sequence[Message], *, max_tokens: int) -> Completion:
        return self._llm.get().complete(messages, max_tokens=max_tokens)

    def stream(self, messages: Sequence[Message], *, max_tokens: int) -> Iterator[str]:
        return self._llm.get().stream(messages, max_tokens=max_tokens)

    service = SERVICE

    def ping(self) -> None:
        """Whether the model endpoint answers (readiness; builds the client)."""
        _ping(self._llm.get())

    def close(self) -> None:
        _close(self._llm.built())


class DeferredEmbedder:
    """`dimensions`, when configured, is known without the client; else the client learns it."""

    def __init__(self, model: str, dimensions: int | None, build: Callable[[], Embedder]) -> None:
        self.model = model
        self._dimensions = dimensions
        self._embedder = Once(build)

    def __repr__(self) -> str:
        return f"DeferredEmbedder({self._embedder.built() or self.model!r})"

    @property
    def dimensions(self) -> int:
        if self._dimensions is not None:
            return self._dimensions
        return self._embedder.get().dimensions

    @dimensions.setter
    def dimensions(self, value: int) -> None:  # the Embedder protocol's attribute is writable
        self._dimensions = value
        built = self._embedder.built()
        if built is not None:
            built.dimensions = value

    def embed_documents(self, texts: Sequence[str]) -> Embedded:
        return self._embedder.get().embed_documents(texts)

    def embed_query(self, text: str) -> EmbeddedQuery:
        return self._embedder.get().embed_query(text)

    service = SERVICE

    def ping(self) -> None:
        """Whether the embedding endpoint answers (readiness; builds the client)."""
        _ping(self._embedder.get())

    def close(self) -> None:
        _close(self._embedder.built())


def _ping(client: object) -> None:
    ping = getattr(client, "ping", None)
    if ping is not None:
        ping()


def _close(client: object) -> None:
    close = getattr(client, "close", None)
    if close is not None:
        close()
