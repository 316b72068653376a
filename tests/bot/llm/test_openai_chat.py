"""OpenAIChat against the real openai SDK and the strict local fake."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.errors import ServiceError, ServiceUnavailable
from bot.llm.chat import LLM, Message
from bot.llm.openai_chat import ChatStream, OpenAIChat, safe_url
from bot.models import Usage
from tests.servers.openai_fake import FakeOpenAI

KEY = "sk-test-secret-key-0123456789"
MESSAGES = [
    Message("system", "Answer from the numbered sources and cite them."),
    Message("user", "[1] billing/charge.py\n[2] billing/retry.py\nHow are retries done?"),
]
EXPECTED = "Based on the sources [1] [2], this is how it works."


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(api_key=KEY) as server:
        yield server


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def chat(fake: FakeOpenAI, sleeps: list[float]) -> Iterator[OpenAIChat]:
    client = OpenAIChat(
        "gpt-test",
        api_key=KEY,
        base_url=fake.base_url,
        timeout=5,
        max_retries=3,
        sleep=sleeps.append,
    )
    yield client
    client.close()


def chat_bodies(fake: FakeOpenAI) -> list[dict[str, object]]:
    return fake.bodies("/chat/completions")


def test_implements_the_llm_protocol(chat: OpenAIChat) -> None:
    llm: LLM = chat
    assert llm.model == "gpt-test"


def test_complete_returns_text_and_usage(chat: OpenAIChat, fake: FakeOpenAI) -> None:
    result = chat.complete(MESSAGES, max_tokens=200)
    assert result.text == EXPECTED
    assert result.prompt_tokens > 0
    assert result.completion_tokens > 0
    assert chat.usage == Usage(result.prompt_tokens, result.completion_tokens)
    (body,) = chat_bodies(fake)
    assert body["model"] == "gpt-test"
    assert body["temperature"] == 0
    assert body["max_tokens"] == 200
    assert "max_completion_tokens" not in body
    assert body["messages"] == [{"role": m.role, "content": m.content} for m in MESSAGES]


def test_output_is_capped_by_max_tokens(chat: OpenAIChat) -> None:
    result = chat.complete(MESSAGES, max_tokens=3)
    assert result.text == EXPECTED[:12]
    assert result.completion_tokens <= 3


def test_stream_yields_pieces_and_reports_usage(chat: OpenAIChat, fake: FakeOpenAI) -> None:
    stream = chat.stream(MESSAGES, max_tokens=100)
    assert isinstance(stream, ChatStream)
    pieces = list(stream)
    assert len(pieces) > 3
    assert "".join(pieces) == EXPECTED
    assert stream.completion is not None
    assert stream.completion.text == EXPECTED
    assert stream.finish_reason == "stop"
    (body,) = chat_bodies(fake)
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["temperature"] == 0
    assert body["max_tokens"] == 100
    # usage comes from the service's final chunk and is added to the client's total
    assert chat.usage.completion_tokens == stream.completion.completion_tokens > 0


def test_rate_limit_then_success_honours_retry_after(
    chat: OpenAIChat, fake: FakeOpenAI, sleeps: list[float]
) -> None:
    fake.fail_next(429, retry_after=2.0)
    assert chat.complete(MESSAGES, max_tokens=50).text == EXPECTED
    assert sleeps == [2.0]
    assert [r.status for r in fake.requests] == [429, 200]


def test_server_errors_back_off_then_give_up(
    chat: OpenAIChat, fake: FakeOpenAI, sleeps: list[float]
) -> None:
    fake.fail_next(500, count=10)
    with pytest.raises(ServiceError) as info:
        chat.complete(MESSAGES, max_tokens=50)
    assert not isinstance(info.value, ServiceUnavailable)
    assert len(fake.requests) == 4  # 1 + max_retries
    assert len(sleeps) == 3
    assert all(0 < s <= 20 for s in sleeps)  # backoff, bounded by the policy's max_delay


def test_503_is_retried_like_500(chat: OpenAIChat, fake: FakeOpenAI) -> None:
    fake.fail_next(503, count=2)
    assert chat.complete(MESSAGES, max_tokens=50).text == EXPECTED


def test_wrong_key_is_unavailable_without_leaking_it(
    fake: FakeOpenAI, sleeps: list[float], caplog: pytest.LogCaptureFixture
) -> None:
    wrong = "sk-wrong-secret-key-999999"
    chat = OpenAIChat("gpt-test", api_key=wrong, base_url=fake.base_url, sleep=sleeps.append)
    with caplog.at_level("DEBUG"), pytest.raises(ServiceUnavailable) as info:
        chat.complete(MESSAGES, max_tokens=50)
    chat.close()
    err = info.value
    assert "OPENAI_API_KEY" in err.user_message
    for text in (err.user_message, str(err), caplog.text, repr(chat)):
        assert wrong not in text and wrong[-6:] not in text
    assert len(fake.requests) == 1  # never retried
    assert sleeps == []


def test_unknown_model_is_unavailable() -> None:
    with FakeOpenAI(models={"gpt-real"}) as fake:
        chat = OpenAIChat("gpt-typo", api_key="k", base_url=fake.base_url)
        with pytest.raises(ServiceUnavailable) as info:
            chat.complete(MESSAGES, max_tokens=50)
        chat.close()
    assert "CODECITE_CHAT_MODEL" in info.value.user_message


def test_bad_request_is_unavailable_and_not_retried(chat: OpenAIChat, fake: FakeOpenAI) -> None:
    fake.fail_next(400)
    with pytest.raises(ServiceUnavailable) as info:
        chat.complete(MESSAGES, max_tokens=50)
    assert "Injected" not in info.value.user_message  # no raw service text
    assert len(fake.requests) == 1


def test_context_too_long_gets_its_own_message(chat: OpenAIChat, fake: FakeOpenAI) -> None:
    fake.fail_next(400, code="context_length_exceeded", param="messages")
    with pytest.raises(ServiceUnavailable) as info:
        chat.complete(MESSAGES, max_tokens=50)
    assert "too long" in info.value.user_message


def test_exhausted_quota_is_not_retried(
    chat: OpenAIChat, fake: FakeOpenAI, sleeps: list[float]
) -> None:
    fake.fail_next(429, code="insufficient_quota")
    with pytest.raises(ServiceUnavailable) as info:
        chat.complete(MESSAGES, max_tokens=50)
    assert "quota" in info.value.user_message
    assert sleeps == []


def test_timeout_is_a_service_error(fake: FakeOpenAI) -> None:
    chat = OpenAIChat("gpt-test", api_key=KEY, base_url=fake.base_url, timeout=0.3, max_retries=0)
    fake.delay_next(30)
    with pytest.raises(ServiceError) as info:
        chat.complete(MESSAGES, max_tokens=50)
    chat.close()
    assert not isinstance(info.value, ServiceUnavailable)
    assert "too long" in info.value.user_message


def test_timeout_then_success_is_retried(fake: FakeOpenAI, sleeps: list[float]) -> None:
    chat = OpenAIChat(
        "gpt-test", api_key=KEY, base_url=fake.base_url, timeout=0.3, sleep=sleeps.append
    )
    fake.delay_next(30)
    assert chat.complete(MESSAGES, max_tokens=50).text == EXPECTED
    chat.close()
    assert len(sleeps) == 1


def test_dropped_connection_is_retried(chat: OpenAIChat, fake: FakeOpenAI) -> None:
    fake.drop_next(2)
    assert chat.complete(MESSAGES, max_tokens=50).text == EXPECTED
    assert [r.status for r in fake.requests] == [-1, -1, 200]


def test_always_dropped_connection_is_a_service_error(chat: OpenAIChat, fake: FakeOpenAI) -> None:
    fake.drop_next(10)
    with pytest.raises(ServiceError) as info:
        chat.complete(MESSAGES, max_tokens=50)
    assert "Could not reach" in info.value.user_message


def test_keyless_local_server_works() -> None:
    with FakeOpenAI() as fake:  # accepts any bearer token, like a local server would ignore it
        chat = OpenAIChat("llama3", api_key=None, base_url=fake.base_url)
        assert chat.complete(MESSAGES, max_tokens=50).text == EXPECTED
        chat.close()
        assert fake.requests[0].headers["authorization"] == "Bearer unused"


def test_stream_open_failure_is_retried(chat: OpenAIChat, fake: FakeOpenAI) -> None:
    fake.fail_next(503)
    assert "".join(chat.stream(MESSAGES, max_tokens=100)) == EXPECTED


def test_stream_cut_mid_answer_is_a_service_error(chat: OpenAIChat, fake: FakeOpenAI) -> None:
    fake.break_stream_next(after_chunks=4)
    stream = chat.stream(MESSAGES, max_tokens=100)
    received: list[str] = []
    with pytest.raises(ServiceError) as info:
        for piece in stream:
            received.append(piece)
    assert received  # some text arrived before the cut
    assert "cut off" in info.value.user_message
    assert len(fake.requests) == 1  # not retried: the text would repeat


def test_stream_can_be_closed_early(chat: OpenAIChat, fake: FakeOpenAI) -> None:
    stream = chat.stream(MESSAGES, max_tokens=100)
    next(stream)
    stream.close()
    assert stream.completion is None
    assert chat.complete(MESSAGES, max_tokens=50).text == EXPECTED  # connection pool still fine


def test_adapts_to_models_that_want_max_completion_tokens(
    chat: OpenAIChat, fake: FakeOpenAI
) -> None:
    fake.unsupported_params = {"max_tokens"}
    assert chat.complete(MESSAGES, max_tokens=40).text == EXPECTED
    assert chat.complete(MESSAGES, max_tokens=40).text == EXPECTED
    bodies = chat_bodies(fake)
    assert [("max_tokens" in b, b.get("max_completion_tokens")) for b in bodies] == [
        (True, None),
        (False, 40),
        (False, 40),
    ]


def test_adapts_to_models_without_temperature_or_stream_options(
    chat: OpenAIChat, fake: FakeOpenAI
) -> None:
    fake.unsupported_params = {"temperature", "stream_options"}
    assert "".join(chat.stream(MESSAGES, max_tokens=60)) == EXPECTED
    last = chat_bodies(fake)[-1]
    assert "temperature" not in last and "stream_options" not in last
    assert len(fake.requests) == 3


def test_stream_without_reported_usage_estimates_it(chat: OpenAIChat, fake: FakeOpenAI) -> None:
    fake.unsupported_params = {"stream_options"}
    stream = chat.stream(MESSAGES, max_tokens=60)
    list(stream)
    assert stream.completion is not None
    assert stream.completion.prompt_tokens > 0 and stream.completion.completion_tokens > 0


def test_repr_and_safe_url_hide_secrets(chat: OpenAIChat) -> None:
    assert KEY not in repr(chat)
    assert safe_url("http://user:pa55@host:8000/v1?x=1") == "http://host:8000/v1"
    assert safe_url(None) == "https://api.openai.com/v1"


@pytest.mark.parametrize("bad", [0, -5])
def test_rejects_nonsense_caps(chat: OpenAIChat, bad: int) -> None:
    with pytest.raises(ValueError):
        chat.complete(MESSAGES, max_tokens=bad)
    with pytest.raises(ValueError):
        chat.complete([], max_tokens=10)
