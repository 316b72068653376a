"""The LLM contract over any OpenAI-compatible chat completions endpoint.

Uses the `openai` SDK with its own retries off; bot.runtime.retry decides what to retry
(408/409/429/5xx, timeouts, dropped connections) and how long to wait. SDK
errors are translated here, at the boundary, into ServiceError (worth trying
again later) or ServiceUnavailable (an admin must fix something).

Some endpoints refuse a parameter that others need: OpenAI's reasoning models
want `max_completion_tokens` instead of `max_tokens` and only their default
temperature, and some local servers reject `stream_options`. When the service
says a parameter is unsupported, the client drops or renames it once and
remembers that for its lifetime.

The helpers `openai_client`, `classify_openai_error` and `translate_openai_error`
are shared with bot.llm.openai_embedder.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import TypeVar
from urllib.parse import urlsplit, urlunsplit

import openai
from openai import OpenAI, Stream, omit
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionMessageParam,
)

from bot.errors import ServiceError, ServiceUnavailable
from bot.llm.chat import Completion, Message
from bot.models import Usage
from bot.runtime import metrics
from bot.runtime.retry import Retrier, Retry, RetryPolicy, is_retryable_status, retry_after_seconds
from bot.text.counting import count_tokens

log = logging.getLogger(__name__)

OPENAI_BASE_URL = "https://api.openai.com/v1"
KEYLESS = "unused"  # local servers ignore the key, but the SDK insists on one

T = TypeVar("T")

# ---------------------------------------------------------------------------
# shared OpenAI plumbing


def openai_client(*, api_key: str | None, base_url: str | None, timeout: float) -> OpenAI:
    """An SDK client with its retries off; a keyless local server gets a placeholder key."""
    return OpenAI(
        api_key=api_key or KEYLESS,
        base_url=base_url or OPENAI_BASE_URL,
        timeout=timeout,
        max_retries=0,
    )


PING_TIMEOUT = 5.0  # seconds a readiness check waits for the model endpoint


def ping_endpoint(client: OpenAI, *, service: str = "model endpoint") -> None:
    """ServiceError unless the endpoint lists its models now (`GET /models`, which every
    OpenAI-compatible server serves): one request, no retry, a short timeout."""
    try:
        client.with_options(timeout=PING_TIMEOUT, max_retries=0).models.list()
    except openai.OpenAIError as exc:
        raise translate_openai_error(exc, service=service, setting="OPENAI_BASE_URL") from exc


def safe_url(url: str | None) -> str:
    """The URL without any user:password part, for logs and reprs."""
    if not url:
        return OPENAI_BASE_URL
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def classify_openai_error(exc: BaseException) -> Retry | None:
    """A retry classifier: timeouts, connection errors and 408/409/429/5xx are transient."""
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return Retry()
    if not isinstance(exc, openai.APIStatusError):
        return None
    headers = exc.response.headers
    if headers.get("x-should-retry") == "false" or exc.code == "insufficient_quota":
        return None
    if headers.get("x-should-retry") == "true" or is_retryable_status(exc.status_code):
        return Retry(after=retry_after_seconds(headers))
    return None


def translate_openai_error(exc: Exception, *, service: str, setting: str) -> ServiceError:
    """A BotError for `exc`; the user message never holds raw error text or a key."""
    err = _translated(exc, service, setting)
    log.warning("%s request failed: %s", service, err.detail)
    return err


def _translated(exc: Exception, service: str, setting: str) -> ServiceError:
    if isinstance(exc, openai.APITimeoutError):
        return ServiceError(
            f"The {service} took too long to answer; please try again.", detail="timeout"
        )
    if isinstance(exc, openai.APIConnectionError):
        return ServiceError(
            f"Could not reach the {service}; please try again.",
            detail=f"connection error ({type(exc.__cause__).__name__})",
        )
    if not isinstance(exc, openai.APIStatusError):
        return ServiceError(
            f"The {service} sent a reply codecite could not read.", detail=type(exc).__name__
        )
    detail = f"status={exc.status_code} code={exc.code} param={exc.param} id={exc.request_id}"
    status = exc.status_code
    if status in (401, 403):
        msg = (
            f"The {service} rejected codecite's credentials; an admin should check OPENAI_API_KEY."
        )
        return ServiceUnavailable(msg, detail=detail)
    if status == 404:
        msg = f"The {service} model was not found; an admin should check {setting}"
        msg += " and OPENAI_BASE_URL."
        return ServiceUnavailable(msg, detail=detail)
    if exc.code == "insufficient_quota":
        msg = f"The {service} account has run out of quota; an admin should check its billing."
        return ServiceUnavailable(msg, detail=detail)
    if exc.code == "context_length_exceeded":
        msg = f"The request was too long for the {service}; try a shorter question."
        return ServiceUnavailable(msg, detail=detail)
    if status == 429:
        return ServiceError(f"The {service} is busy; please try again in a minute.", detail=detail)
    if is_retryable_status(status):
        return ServiceError(f"The {service} failed to answer; please try again.", detail=detail)
    return ServiceUnavailable(f"The {service} refused codecite's request.", detail=detail)


# ---------------------------------------------------------------------------
# the chat client

_SERVICE = "language model"
_SETTING = "CODECITE_CHAT_MODEL"
_UNSUPPORTED = frozenset({"unsupported_parameter", "unsupported_value"})


class OpenAIChat:
    """LLM over `POST /chat/completions`: temperature 0, output capped at max_tokens."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if max_retries < 0:
            raise ValueError("max_retries must not be negative")
        self.model = model
        self.base_url = safe_url(base_url)
        self._client = openai_client(api_key=api_key, base_url=base_url, timeout=timeout)
        self._retrier = Retrier(RetryPolicy(max_attempts=max_retries + 1), sleep=sleep)
        self._completion_cap = False  # `max_tokens` until refused: every compatible server knows it
        self._send_temperature = True
        self._stream_usage = True
        self._lock = threading.Lock()
        self._usage = Usage()

    def __repr__(self) -> str:
        return f"OpenAIChat(model={self.model!r}, base_url={self.base_url!r})"

    @property
    def usage(self) -> Usage:
        """Prompt and completion tokens used by this client so far."""
        with self._lock:
            return self._usage

    def complete(self, messages: Sequence[Message], *, max_tokens: int) -> Completion:
        wire = _wire_messages(messages, max_tokens)
        resp = self._request(lambda: self._create(wire, max_tokens))
        choice = resp.choices[0] if resp.choices else None
        text = ""
        if choice is not None:
            text = choice.message.content or choice.message.refusal or ""
            if choice.finish_reason == "length":
                log.info("answer reached max_tokens=%d and was cut short", max_tokens)
        if resp.usage is not None:
            prompt, completion = resp.usage.prompt_tokens, resp.usage.completion_tokens
        else:  # some compatible servers omit usage
            prompt, completion = _estimate_prompt(messages), count_tokens(text)
        self._add_usage(prompt, completion)
        return Completion(text, prompt, completion)

    def stream(self, messages: Sequence[Message], *, max_tokens: int) -> ChatStream:
        """Text pieces as they arrive; the returned ChatStream also reports usage at the end.

        The request is made here, so a failure to start raises ServiceError from this
        call; a stream that breaks later raises it from the iteration.
        """
        wire = _wire_messages(messages, max_tokens)
        raw = self._request(lambda: self._create_stream(wire, max_tokens))
        return ChatStream(raw, prompt_estimate=_estimate_prompt(messages), on_done=self._add_usage)

    def ping(self) -> None:
        """ServiceError unless the endpoint answers a list of its models now (readiness)."""
        ping_endpoint(self._client)

    def close(self) -> None:
        self._client.close()

    # requests --------------------------------------------------------------

    def _create(self, wire: list[ChatCompletionMessageParam], max_tokens: int) -> ChatCompletion:
        return self._client.chat.completions.create(
            model=self.model,
            messages=wire,
            temperature=0 if self._send_temperature else omit,
            max_tokens=omit if self._completion_cap else max_tokens,
            max_completion_tokens=max_tokens if self._completion_cap else omit,
        )

    def _create_stream(
        self, wire: list[ChatCompletionMessageParam], max_tokens: int
    ) -> Stream[ChatCompletionChunk]:
        return self._client.chat.completions.create(
            model=self.model,
            messages=wire,
            stream=True,
            stream_options={"include_usage": True} if self._stream_usage else omit,
            temperature=0 if self._send_temperature else omit,
            max_tokens=omit if self._completion_cap else max_tokens,
            max_completion_tokens=max_tokens if self._completion_cap else omit,
        )

    def _request(self, fn: Callable[[], T]) -> T:
        while True:
            try:
                with metrics.timed_model("chat", self.model):
                    return self._retrier.call(fn, classify_openai_error, what="chat completion")
            except openai.OpenAIError as exc:
                if isinstance(exc, openai.BadRequestError) and self._adapt(exc):
                    continue
                raise translate_openai_error(exc, service=_SERVICE, setting=_SETTING) from exc

    def _adapt(self, exc: openai.BadRequestError) -> bool:
        """Drop or rename a parameter the service says it does not support; False if none."""
        if exc.code not in _UNSUPPORTED:
            return False
        if exc.param == "max_tokens" and not self._completion_cap:
            self._completion_cap = True
        elif exc.param == "temperature" and self._send_temperature:
            self._send_temperature = False
        elif exc.param == "stream_options" and self._stream_usage:
            self._stream_usage = False
        else:
            return False
        log.info("model %s does not support %s; adapting the request", self.model, exc.param)
        return True

    def _add_usage(self, prompt: int, completion: int) -> None:
        metrics.model_tokens("chat", self.model, prompt=prompt, completion=completion)
        with self._lock:
            self._usage = self._usage + Usage(prompt, completion)


class ChatStream:
    """An iterator of text pieces from a streamed answer.

    Once exhausted, `completion` holds the whole text and its token usage (as the
    service reported it, or estimated when it did not). A failure after the first
    piece cannot be retried without repeating text, so it raises ServiceError.
    """

    def __init__(
        self,
        raw: Stream[ChatCompletionChunk],
        *,
        prompt_estimate: int,
        on_done: Callable[[int, int], None],
    ) -> None:
        self._raw = raw
        self._prompt_estimate = prompt_estimate
        self._on_done = on_done
        self._pieces: list[str] = []
        self._reported: tuple[int, int] | None = None
        self.finish_reason: str | None = None
        self.completion: Completion | None = None
        self._iter = self._run()

    def __iter__(self) -> ChatStream:
        return self

    def __next__(self) -> str:
        return next(self._iter)

    def close(self) -> None:
        """Stop early and release the connection."""
        self._iter.close()
        self._raw.close()

    def _run(self) -> Generator[str, None, None]:
        try:
            for chunk in self._raw:
                yield from self._take(chunk)
        except openai.OpenAIError as exc:
            kind = type(exc).__name__  # never the message: it may quote the request
            log.warning("answer stream broke after %d pieces: %s", len(self._pieces), kind)
            raise ServiceError(
                "The language model's answer was cut off; please try again.",
                detail=f"stream broke ({kind})",
            ) from exc
        finally:
            self._raw.close()
        self._finish()

    def _take(self, chunk: ChatCompletionChunk) -> Iterator[str]:
        if chunk.usage is not None:
            self._reported = (chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
        for choice in chunk.choices:
            if choice.index != 0:
                continue
            if choice.finish_reason is not None:
                self.finish_reason = choice.finish_reason
            if choice.delta.content:
                self._pieces.append(choice.delta.content)
                yield choice.delta.content

    def _finish(self) -> None:
        text = "".join(self._pieces)
        prompt, completion = self._reported or (self._prompt_estimate, count_tokens(text))
        if self.finish_reason == "length":
            log.info("streamed answer reached max_tokens and was cut short")
        self.completion = Completion(text, prompt, completion)
        self._on_done(prompt, completion)


def _wire_messages(
    messages: Sequence[Message], max_tokens: int
) -> list[ChatCompletionMessageParam]:
    if max_tokens < 1:
        raise ValueError("max_tokens must be at least 1")
    if not messages:
        raise ValueError("a chat needs at least one message")
    wire: list[ChatCompletionMessageParam] = []
    for m in messages:
        if m.role == "system":
            wire.append({"role": "system", "content": m.content})
        elif m.role == "assistant":
            wire.append({"role": "assistant", "content": m.content})
        else:
            wire.append({"role": "user", "content": m.content})
    return wire


def _estimate_prompt(messages: Sequence[Message]) -> int:
    return sum(count_tokens(m.content) + 4 for m in messages)  # ~4 tokens of framing each
