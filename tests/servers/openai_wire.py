"""OpenAI's wire format for the fake server: request validation and response bodies.

Strict like the real service: unknown arguments, missing model or messages, bad
roles, temperature outside [0, 2], output caps below 1, more than 2,048
embedding inputs, empty inputs, an input over 8,192 tokens or a request over
300,000 tokens all get a 400 in OpenAI's error shape
`{"error": {"message", "type", "param", "code"}}`.

Token counts use one documented rule, `ceil(len(text) / 4)` per string
(`estimate_tokens`); `bot.text.counting.count_tokens` never counts lower, so a
client batching by it never trips these limits.

Embedding vectors are deterministic: a signed, hashed bag of
`bot.text.tokens.code_tokens` folded into the dimension and L2-normalised, so
texts sharing identifiers are close.
"""

from __future__ import annotations

import base64
import hashlib
import math
import re
from collections.abc import Callable, Collection, Iterator
from typing import Any

import numpy as np

from bot.text.tokens import code_tokens

MAX_EMBED_INPUTS = 2048
MAX_EMBED_INPUT_TOKENS = 8192
MAX_EMBED_REQUEST_TOKENS = 300_000
MAX_EMBED_DIMENSIONS = 3072
CHAT_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
CHAT_PARAMS = frozenset(
    """model messages temperature top_p n stream stream_options stop max_tokens
    max_completion_tokens presence_penalty frequency_penalty logit_bias logprobs top_logprobs
    user seed response_format tools tool_choice parallel_tool_calls metadata store
    reasoning_effort service_tier prediction modalities audio safety_identifier
    prompt_cache_key verbosity""".split()
)
EMBED_PARAMS = frozenset({"model", "input", "dimensions", "encoding_format", "user"})
_SOURCE_REF = re.compile(r"(?<![\w\]])\[(\d{1,3})\]")  # `[2]`, but not `args[2]`


class ApiError(Exception):
    """An error response: status and OpenAI's error body."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type_: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = {"error": {"message": message, "type": type_, "param": param, "code": code}}


def estimate_tokens(text: str) -> int:
    """The fake's token rule: ceil(characters / 4)."""
    return math.ceil(len(text) / 4)


def default_chat_reply(body: dict[str, Any]) -> str:
    """Cites every numbered source `[n]` that appears in the prompt, so answers can be checked."""
    prompt = "\n".join(_content_text(m.get("content")) for m in body.get("messages", []))
    refs = list(dict.fromkeys(_SOURCE_REF.findall(prompt)))
    if not refs:
        return "The indexed code does not answer this."
    cited = " ".join(f"[{r}]" for r in refs)
    return f"Based on the sources {cited}, this is how it works."


def fake_embedding(text: str, dimensions: int) -> list[float]:
    """Hashed bag of code tokens, L2-normalised; falls back to the raw text when it has none."""
    vec = np.zeros(dimensions, dtype=np.float64)
    for token in code_tokens(text) or [text]:
        digest = hashlib.blake2b(token.encode("utf-8", "replace"), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        vec[value % dimensions] += 1.0 if (value >> 63) & 1 else -1.0
    norm = float(np.linalg.norm(vec))
    if norm == 0.0:  # collisions cancelled out; any fixed unit vector will do
        vec[0] = 1.0
        norm = 1.0
    return [float(x) for x in vec / norm]


# validation ---------------------------------------------------------------


def validate_chat(
    body: Any, *, models: Collection[str] | None = None, unsupported: Collection[str] = ()
) -> None:
    """Raise ApiError for a chat request the real service would refuse."""
    _require_object(body)
    _reject_unknown(body, CHAT_PARAMS, unsupported)
    _require_model(body, models)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ApiError(400, "Missing required parameter: 'messages'.", param="messages")
    for i, message in enumerate(messages):
        _validate_message(i, message)
    temperature = body.get("temperature")
    if temperature is not None and (
        not isinstance(temperature, int | float) or not 0 <= temperature <= 2
    ):
        raise ApiError(400, "'temperature' must be between 0 and 2.", param="temperature")
    for name in ("max_tokens", "max_completion_tokens"):
        value = body.get(name)
        if value is not None and (not _is_int(value) or value < 1):
            raise ApiError(400, f"Invalid '{name}': must be at least 1.", param=name)
    if body.get("n") not in (None, 1):
        raise ApiError(400, "This fake supports only n=1.", param="n")
    if body.get("stream_options") is not None and not body.get("stream"):
        raise ApiError(
            400,
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
            param="stream_options",
        )


def validate_embeddings(
    body: Any, *, models: Collection[str] | None = None, unsupported: Collection[str] = ()
) -> list[int]:
    """Check an embeddings request; return each input's token count."""
    _require_object(body)
    _reject_unknown(body, EMBED_PARAMS, unsupported)
    _require_model(body, models)
    if body.get("encoding_format", "float") not in ("float", "base64"):
        raise ApiError(
            400, "'encoding_format' must be 'float' or 'base64'.", param="encoding_format"
        )
    dims = body.get("dimensions")
    if dims is not None and (not _is_int(dims) or not 1 <= dims <= MAX_EMBED_DIMENSIONS):
        raise ApiError(400, "Invalid 'dimensions'.", param="dimensions")
    inputs = _embedding_inputs(body.get("input"))
    if len(inputs) > MAX_EMBED_INPUTS:
        raise ApiError(400, f"'$.input' must have at most {MAX_EMBED_INPUTS} items.", param="input")
    tokens = [estimate_tokens(x) if isinstance(x, str) else len(x) for x in inputs]
    for i, count in enumerate(tokens):
        if count > MAX_EMBED_INPUT_TOKENS:
            raise ApiError(
                400,
                f"Input {i} has {count} tokens; the maximum is {MAX_EMBED_INPUT_TOKENS}.",
                param="input",
            )
    if sum(tokens) > MAX_EMBED_REQUEST_TOKENS:
        raise ApiError(
            400,
            f"Requested {sum(tokens)} tokens, max {MAX_EMBED_REQUEST_TOKENS} tokens per request",
            param="input",
            code="max_tokens_per_request",
        )
    return tokens


def _embedding_inputs(raw: Any) -> list[Any]:
    """Normalise `input` to a list of strings or token-id lists, rejecting what OpenAI rejects."""
    bad = ApiError(400, "'$.input' is invalid. Please check the API reference.", param="input")
    single_tokens = isinstance(raw, list) and raw and all(_is_int(x) for x in raw)
    if isinstance(raw, str) or single_tokens:
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        raise bad
    for item in raw:
        if isinstance(item, str):
            if not item:
                raise bad
        elif not (isinstance(item, list) and item and all(_is_int(x) for x in item)):
            raise bad
    return raw


def _validate_message(i: int, message: Any) -> None:
    if not isinstance(message, dict):
        raise ApiError(400, f"Invalid type for 'messages[{i}]'.", param=f"messages[{i}]")
    role = message.get("role")
    if role not in CHAT_ROLES:
        raise ApiError(
            400,
            f"Invalid value: '{role}'. Supported values are: {sorted(CHAT_ROLES)}.",
            param=f"messages[{i}].role",
            code="invalid_value",
        )
    content = message.get("content")
    if content is None and role != "assistant":
        raise ApiError(
            400, f"Missing required parameter: 'messages[{i}].content'.", param="messages"
        )
    if content is not None and not isinstance(content, str | list):
        raise ApiError(400, f"Invalid type for 'messages[{i}].content'.", param="messages")
    if role == "tool" and not message.get("tool_call_id"):
        raise ApiError(400, f"Missing 'messages[{i}].tool_call_id'.", param="messages")


def _require_object(body: Any) -> None:
    if not isinstance(body, dict):
        raise ApiError(400, "We could not parse the JSON body of your request.")


def _reject_unknown(
    body: dict[str, Any], known: frozenset[str], unsupported: Collection[str]
) -> None:
    for name in body:
        if name not in known:
            raise ApiError(400, f"Unrecognized request argument supplied: {name}")
        if name in unsupported:
            raise ApiError(
                400,
                f"Unsupported parameter: '{name}' is not supported with this model.",
                param=name,
                code="unsupported_parameter",
            )


def _require_model(body: dict[str, Any], models: Collection[str] | None) -> None:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise ApiError(400, "You must provide a model parameter.", param="model")
    if models is not None and model not in models:
        raise ApiError(
            404,
            f"The model `{model}` does not exist or you do not have access to it.",
            code="model_not_found",
        )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


# responses ----------------------------------------------------------------


def chat_completion(body: dict[str, Any], reply: str, request_no: int) -> dict[str, Any]:
    text, finish, prompt, completion = _shape_reply(body, reply)
    return {
        "id": f"chatcmpl-{request_no}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": body["model"],
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": None},
                "logprobs": None,
                "finish_reason": finish,
            }
        ],
        "usage": _usage(prompt, completion),
    }


def chat_chunks(
    body: dict[str, Any],
    reply: str,
    request_no: int,
    split: Callable[[str], list[str]] | None = None,
) -> Iterator[dict[str, Any]]:
    """The SSE chunk objects for a streamed answer, usage last when asked for.

    `split` cuts the text into content deltas (default: a word and its spaces each)."""
    text, finish, prompt, completion = _shape_reply(body, reply)
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    base = {
        "id": f"chatcmpl-{request_no}",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": body["model"],
    }
    extra = {"usage": None} if include_usage else {}
    pieces = [{"role": "assistant", "content": ""}]
    parts = split(text) if split is not None else re.findall(r"\S+\s*|\s+", text)
    pieces += [{"content": p} for p in parts if p]
    for delta in pieces:
        yield {**base, **extra, "choices": [_choice(delta, None)]}
    yield {**base, **extra, "choices": [_choice({}, finish)]}
    if include_usage:
        yield {**base, "choices": [], "usage": _usage(prompt, completion)}


def _choice(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    return {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}


def _shape_reply(body: dict[str, Any], reply: str) -> tuple[str, str, int, int]:
    """Cap the reply at the request's output limit, like the real service."""
    limit = body.get("max_completion_tokens") or body.get("max_tokens")
    finish = "stop"
    if limit is not None and estimate_tokens(reply) > limit:
        reply = reply[: limit * 4]
        finish = "length"
    prompt = sum(estimate_tokens(_content_text(m.get("content"))) + 3 for m in body["messages"])
    return reply, finish, prompt, estimate_tokens(reply)


def _usage(prompt: int, completion: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def embeddings_response(body: dict[str, Any], tokens: list[int], default_dims: int) -> Any:
    dims = body.get("dimensions") or default_dims
    as_base64 = body.get("encoding_format") == "base64"
    inputs = _embedding_inputs(body["input"])
    data = []
    for i, item in enumerate(inputs):
        text = item if isinstance(item, str) else " ".join(f"t{t}" for t in item)
        vector = fake_embedding(text, dims)
        encoded: Any = vector
        if as_base64:
            raw = np.asarray(vector, dtype="<f4").tobytes()
            encoded = base64.b64encode(raw).decode("ascii")
        data.append({"object": "embedding", "index": i, "embedding": encoded})
    total = sum(tokens)
    return {
        "object": "list",
        "data": data,
        "model": body["model"],
        "usage": {"prompt_tokens": total, "total_tokens": total},
    }


def fault_error(status: int, *, code: str | None = None, param: str | None = None) -> ApiError:
    """An injected failure worded like the real service's."""
    if status == 429 and code == "insufficient_quota":
        message = "You exceeded your current quota, please check your plan and billing details."
        return ApiError(429, message, type_="insufficient_quota", code=code)
    if status == 429:
        message = "Rate limit reached for requests. Please try again later."
        return ApiError(429, message, type_="requests", code=code or "rate_limit_exceeded")
    if status >= 500:
        message = "The server had an error while processing your request."
        return ApiError(status, message, type_="server_error", code=code, param=param)
    return ApiError(status, f"Injected failure with status {status}.", code=code, param=param)
