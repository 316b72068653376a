"""The fake OpenAI server is strict like the real one, so tests built on it mean something."""

from __future__ import annotations

import base64
import json
import math
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import numpy as np
import openai
import pytest

from tests.servers.openai_fake import FakeOpenAI
from tests.servers.openai_wire import fake_embedding


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def client(fake: FakeOpenAI) -> Iterator[openai.OpenAI]:
    c = openai.OpenAI(base_url=fake.base_url, api_key="test-key", max_retries=0, timeout=5)
    yield c
    c.close()


def post(
    fake: FakeOpenAI, path: str, body: Any, *, auth: str | None = "Bearer test"
) -> tuple[int, Any]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(fake.base_url + path, data=data, method="POST")
    req.add_header("Content-Type", "application/json")
    if auth is not None:
        req.add_header("Authorization", auth)
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
EMBED = {"model": "e", "input": ["hello"]}


def test_chat_completion_shape_and_usage(client: openai.OpenAI) -> None:
    resp = client.chat.completions.create(
        model="gpt-test",
        messages=[{"role": "system", "content": "Sources: [1] a.py [2] b.py"}],
        temperature=0,
        max_tokens=100,
    )
    assert resp.model == "gpt-test"
    assert resp.choices[0].message.content == "Based on the sources [1] [2], this is how it works."
    assert resp.choices[0].finish_reason == "stop"
    assert resp.usage is not None
    assert resp.usage.total_tokens == resp.usage.prompt_tokens + resp.usage.completion_tokens


def test_chat_output_is_capped_by_max_tokens(client: openai.OpenAI) -> None:
    resp = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "[1]"}], max_tokens=2
    )
    assert resp.choices[0].finish_reason == "length"
    assert len(resp.choices[0].message.content or "") <= 8


def test_stream_with_usage(client: openai.OpenAI) -> None:
    chunks = list(
        client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "see [3]"}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Based on the sources [3], this is how it works."
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert all(c.usage is None for c in chunks[:-1])


def test_stream_without_usage_sends_none(client: openai.OpenAI) -> None:
    chunks = list(
        client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}], stream=True
        )
    )
    assert all(c.usage is None for c in chunks)


def test_embeddings_base64_is_little_endian_float32(fake: FakeOpenAI) -> None:
    status, body = post(fake, "/embeddings", {**EMBED, "encoding_format": "base64"})
    assert status == 200
    raw = base64.b64decode(body["data"][0]["embedding"])
    vec = np.frombuffer(raw, dtype="<f4")
    assert len(vec) == 64
    assert np.allclose(vec, fake_embedding("hello", 64), atol=1e-6)
    assert body["usage"] == {"prompt_tokens": 2, "total_tokens": 2}


def test_embeddings_float_dimensions_and_similarity(fake: FakeOpenAI) -> None:
    texts = ["def charge_invoice(customer)", "charge the invoice of a customer", "parse yaml"]
    status, body = post(fake, "/embeddings", {"model": "e", "input": texts, "dimensions": 32})
    assert status == 200
    vecs = [np.array(d["embedding"]) for d in body["data"]]
    assert [len(v) for v in vecs] == [32, 32, 32]
    assert all(math.isclose(float(np.linalg.norm(v)), 1.0, abs_tol=1e-9) for v in vecs)
    assert float(vecs[0] @ vecs[1]) > float(vecs[0] @ vecs[2])
    assert body["model"] == "e"
    assert fake.embedding_calls == 1 and fake.embedding_inputs == 3


def test_sdk_default_embedding_request_decodes(client: openai.OpenAI, fake: FakeOpenAI) -> None:
    resp = client.embeddings.create(model="e", input=["alpha beta"])
    assert fake.bodies("/embeddings")[0]["encoding_format"] == "base64"
    assert np.allclose(resp.data[0].embedding, fake_embedding("alpha beta", 64), atol=1e-6)


def test_each_answered_embeddings_request_is_recorded_with_its_usage(fake: FakeOpenAI) -> None:
    status, body = post(fake, "/embeddings", {"model": "e", "input": ["retry me", "a bit longer"]})
    assert status == 200
    assert post(fake, "/embeddings", {"model": "e", "input": [""]})[0] == 400  # not recorded
    assert post(fake, "/embeddings", {"model": "e", "input": [5, 6, 7]})[0] == 200  # token ids
    single, tokens = fake.embeddings_served
    assert single.inputs == ("retry me", "a bit longer")
    assert single.total_tokens == body["usage"]["total_tokens"] == sum(single.input_tokens)
    assert tokens.inputs == ("5 6 7",) and tokens.input_tokens == (3,) and tokens.total_tokens == 3


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"messages": CHAT["messages"]}, "model"),
        ({"model": "m"}, "messages"),
        ({"model": "m", "messages": []}, "messages"),
        ({**CHAT, "messages": [{"role": "wizard", "content": "x"}]}, "messages[0].role"),
        ({**CHAT, "messages": [{"role": "user"}]}, "messages"),
        ({**CHAT, "temperature": 2.5}, "temperature"),
        ({**CHAT, "temperature": -0.1}, "temperature"),
        ({**CHAT, "max_tokens": 0}, "max_tokens"),
        ({**CHAT, "max_completion_tokens": 0}, "max_completion_tokens"),
        ({**CHAT, "stream_options": {"include_usage": True}}, "stream_options"),
        ({**CHAT, "bogus": 1}, None),
    ],
)
def test_chat_rejects_bad_requests(fake: FakeOpenAI, body: Any, param: str | None) -> None:
    status, reply = post(fake, "/chat/completions", body)
    assert status == 400
    assert set(reply["error"]) == {"message", "type", "param", "code"}
    assert reply["error"]["type"] == "invalid_request_error"
    assert reply["error"]["param"] == param


@pytest.mark.parametrize(
    "body",
    [
        {"input": ["x"]},
        {"model": "e", "input": ""},
        {"model": "e", "input": ["ok", ""]},
        {"model": "e", "input": []},
        {"model": "e", "input": [None]},
        {"model": "e", "input": ["x"] * 2049},
        {"model": "e", "input": ["x" * (8192 * 4 + 1)]},
        {"model": "e", "input": ["y" * 32_000] * 10},  # 80,000 tokens: fine
        {"model": "e", "input": ["y" * 32_000] * 40},  # 320,000 tokens: too many
        {"model": "e", "input": ["x"], "encoding_format": "hex"},
        {"model": "e", "input": ["x"], "dimensions": 0},
        {"model": "e", "input": ["x"], "extra": True},
    ],
)
def test_embeddings_reject_what_openai_rejects(fake: FakeOpenAI, body: Any) -> None:
    status, reply = post(fake, "/embeddings", body)
    if len(body.get("input") or []) == 10:
        assert status == 200  # the control case: just under the request limit
        return
    assert status == 400, reply
    assert reply["error"]["type"] == "invalid_request_error"


def test_exact_limits_are_accepted(fake: FakeOpenAI) -> None:
    assert post(fake, "/embeddings", {"model": "e", "input": ["x"] * 2048})[0] == 200
    assert post(fake, "/embeddings", {"model": "e", "input": ["x" * 8192 * 4]})[0] == 200


def test_missing_or_malformed_auth_is_401(fake: FakeOpenAI) -> None:
    for auth in (None, "Basic abc", "Bearer ", "bearer abc"):
        status, reply = post(fake, "/chat/completions", CHAT, auth=auth)
        assert status == 401, auth
        assert "API key" in reply["error"]["message"]


def test_wrong_key_is_401_with_the_key_masked() -> None:
    with FakeOpenAI(api_key="sk-right-key-123456") as fake:
        status, reply = post(fake, "/embeddings", EMBED, auth="Bearer sk-wrong-key-987654")
        assert status == 401
        assert reply["error"]["code"] == "invalid_api_key"
        assert "sk-wrong-key-987654" not in reply["error"]["message"]
        assert post(fake, "/embeddings", EMBED, auth="Bearer sk-right-key-123456")[0] == 200


def test_unknown_model_is_404_when_models_are_listed() -> None:
    with FakeOpenAI(models={"known"}) as fake:
        status, reply = post(fake, "/chat/completions", CHAT)
        assert status == 404
        assert reply["error"]["code"] == "model_not_found"


def test_unknown_path_is_404_and_bad_json_is_400(fake: FakeOpenAI) -> None:
    assert post(fake, "/nothing", {})[0] == 404
    assert post(fake, "/chat/completions", b"{not json")[0] == 400


def test_unsupported_params_knob(fake: FakeOpenAI) -> None:
    fake.unsupported_params = {"max_tokens"}
    status, reply = post(fake, "/chat/completions", {**CHAT, "max_tokens": 5})
    assert status == 400
    assert reply["error"]["code"] == "unsupported_parameter"
    assert reply["error"]["param"] == "max_tokens"


def test_fail_next_counts_and_sends_retry_after(client: openai.OpenAI, fake: FakeOpenAI) -> None:
    fake.fail_next(429, count=2, retry_after=1.5)
    for _ in range(2):
        with pytest.raises(openai.RateLimitError) as info:
            client.embeddings.create(model="e", input=["a"])
        assert info.value.response.headers["retry-after-ms"] == "1500"
    client.embeddings.create(model="e", input=["a"])
    assert [r.status for r in fake.requests] == [429, 429, 200]
    assert fake.embedding_calls == 1


def test_drop_and_broken_stream_are_connection_errors(
    client: openai.OpenAI, fake: FakeOpenAI
) -> None:
    fake.drop_next()
    with pytest.raises(openai.APIConnectionError):
        client.embeddings.create(model="e", input=["a"])
    fake.break_stream_next(after_chunks=2)
    stream = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "a b c d"}], stream=True
    )
    with pytest.raises(openai.APIConnectionError):
        list(stream)


def test_delay_beyond_timeout_is_a_timeout(client: openai.OpenAI, fake: FakeOpenAI) -> None:
    fake.delay_next(30)
    with pytest.raises(openai.APITimeoutError):
        client.with_options(timeout=0.3).embeddings.create(model="e", input=["a"])


def test_records_headers_and_bodies(client: openai.OpenAI, fake: FakeOpenAI) -> None:
    client.embeddings.create(model="e", input=["a"])
    (rec,) = fake.requests
    assert rec.method == "POST" and rec.path == "/v1/embeddings" and rec.status == 200
    assert rec.headers["authorization"] == "Bearer test-key"
    assert rec.body["input"] == ["a"]


def test_models_list(client: openai.OpenAI) -> None:
    assert {m.id for m in client.models.list()} == {"gpt-4o-mini", "text-embedding-3-small"}


def test_chat_reply_errors_become_500_and_are_kept(fake: FakeOpenAI) -> None:
    def broken(body: dict[str, Any]) -> str:
        raise RuntimeError("test bug")

    fake.chat_reply = broken
    assert post(fake, "/chat/completions", CHAT)[0] == 500
    assert isinstance(fake.errors[0], RuntimeError)


def test_stream_split_rate_and_hold(client: openai.OpenAI, fake: FakeOpenAI) -> None:
    fake.chat_reply = lambda body: "abcdef"
    fake.stream_split = lambda text: [text[:2], text[2:3], text[3:]]
    fake.stream_interval = 0.05
    release = fake.hold_stream_next(after_chunks=2)  # the role chunk and "ab"
    stream = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "x"}], stream=True
    )
    chunks = iter(stream)
    contents = [next(chunks).choices[0].delta.content, next(chunks).choices[0].delta.content]
    assert contents == ["", "ab"]
    assert not release.is_set()  # the client has "ab" while the fake still holds the rest
    release.set()
    started = time.monotonic()
    rest = [c.choices[0].delta.content for c in chunks if c.choices]
    assert rest[:2] == ["c", "def"]
    assert time.monotonic() - started >= 0.1  # at least two paced chunks followed


def test_first_chunk_delay_and_paced_whole_replies(client: openai.OpenAI, fake: FakeOpenAI) -> None:
    fake.chat_reply = lambda body: "one two three"
    fake.first_chunk_delay = 0.2
    fake.stream_interval = 0.05
    started = time.monotonic()
    stream = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "x"}], stream=True
    )
    first = next(iter(stream))
    assert first.choices[0].delta.role == "assistant"
    assert time.monotonic() - started >= 0.2  # no chunk before the time to first token
    pieces = [c.choices[0].delta.content for c in stream if c.choices]
    assert "".join(p or "" for p in pieces) == "one two three"
    # role, three words, finish: five chunks, written in 0.2 + 4 x 0.05 s
    assert fake.writing_time(5) == pytest.approx(0.4)
    whole = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    fake.pace_whole_replies = True
    started = time.monotonic()
    paced = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert time.monotonic() - started >= 0.4  # as long as the stream of it takes
    assert paced.choices[0].message.content == whole.choices[0].message.content == "one two three"
