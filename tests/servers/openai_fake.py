"""A strict, local fake of the OpenAI HTTP API for tests that drive the real `openai` SDK.

    with FakeOpenAI() as fake:
        client = OpenAI(base_url=fake.base_url, api_key="test", max_retries=0)
        ...
        assert fake.bodies("/chat/completions")[-1]["temperature"] == 0

Serves `POST /v1/chat/completions` (JSON, or SSE with `stream: true`),
`POST /v1/embeddings` (base64 or float vectors) and `GET /v1/models`; anything
else is a 404. What it accepts and how it answers lives in `openai_wire`.
Authentication: a request without `Authorization: Bearer <token>` gets a 401;
with `api_key=` set, any other token does too.

Fault knobs apply to the next requests in arrival order, whatever their path:
`fail_next` (429/500/503 with optional Retry-After), `delay_next` (a long delay
is a hang; `stop()` cuts it short), `drop_next` (close without answering),
`break_stream_next` (cut an SSE stream after some chunks), `hold_stream_next`
(pause a stream after some chunks until released). Streams are shaped by
`stream_split` (text -> content deltas), `first_chunk_delay` (seconds before
the first chunk: the time to first token) and `stream_interval` (seconds before
each chunk after the first: a rate); with `pace_whole_replies` a non-streamed
reply comes when its stream would have ended, as a model writing at that rate
answers (`writing_time`). `gate(n)` holds
requests until n are in flight at once, which proves concurrency without
timing assertions. `requests` records every request (path, lower-cased
headers, parsed JSON body, status; -1 when the connection was cut);
`embeddings_served` records each answered embeddings request's inputs and the
token usage the reply reported, so a test can attribute usage to its callers.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import math
import socket
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.servers.openai_wire import (
    ApiError,
    chat_chunks,
    chat_completion,
    default_chat_reply,
    embeddings_response,
    fault_error,
    validate_chat,
    validate_embeddings,
)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # The real service never refuses a connection; the default backlog of 5 would drop a
    # burst's SYNs, and the client's retransmission adds a second to those requests.
    request_queue_size = 128

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up (the SDK drops a finished stream's connection) is no error.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@dataclass(frozen=True)
class Recorded:
    """One request as the fake received it; `status` is filled in once it is answered."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    status: int = 0


@dataclass(frozen=True)
class ServedEmbeddings:
    """One answered (200) embeddings request: its inputs and the usage the reply reported."""

    inputs: tuple[str, ...]  # token-id inputs appear as their ids joined by spaces
    input_tokens: tuple[int, ...]  # per input, as the fake counts them
    total_tokens: int  # the reply's usage.total_tokens


@dataclass
class _Fault:
    kind: str  # "fail", "delay", "drop", "break"
    status: int = 0
    retry_after: float | None = None
    seconds: float = 0.0
    after_chunks: int = 0
    code: str | None = None
    param: str | None = None


class FakeOpenAI:
    """The fake server. Use as a context manager, or start()/stop().

    Settable: `dimensions` (default vector size), `chat_reply(body) -> str`,
    `unsupported_params` (answered with OpenAI's 400 `unsupported_parameter`).
    Counters: `embedding_calls` / `embedding_inputs` count answered (200) embedding
    requests and their inputs; `in_flight_peak` is the most requests handled at once.
    """

    def __init__(
        self,
        *,
        dimensions: int = 64,
        api_key: str | None = None,
        models: set[str] | None = None,
    ) -> None:
        self.dimensions = dimensions
        self.api_key = api_key  # None: any non-empty bearer token is accepted
        self.models = models  # None: any model name is accepted
        self.chat_reply: Callable[[dict[str, Any]], str] = default_chat_reply
        self.unsupported_params: set[str] = set()
        # Streaming shape: how the reply is cut into content deltas, and the pause before each.
        self.stream_split: Callable[[str], list[str]] | None = None
        self.first_chunk_delay = 0.0
        self.stream_interval = 0.0
        self.pace_whole_replies = False  # a non-streamed reply takes as long as its stream
        self._stream_holds: deque[tuple[int, threading.Event]] = deque()
        self.embedding_inputs = 0
        self.embedding_calls = 0
        self.in_flight_peak = 0
        self.errors: list[BaseException] = []  # exceptions raised by chat_reply or the fake itself
        self._ids = itertools.count(1)
        self._in_flight = 0
        self._lock = threading.Lock()
        self._requests: list[Recorded] = []
        self._served_embeddings: list[ServedEmbeddings] = []
        self._faults: deque[_Fault] = deque()
        self._stopping = threading.Event()
        self._gate_size = 0
        self._gate_open = threading.Event()
        self._gate_open.set()
        self._connections: set[socket.socket] = set()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle -------------------------------------------------------------

    def start(self) -> FakeOpenAI:
        handler = type("Handler", (_Handler,), {"fake": self})
        server = _Server(("127.0.0.1", 0), handler)
        self._server = server
        # A short poll interval makes stop() quick (shutdown waits for one poll).
        serve = functools.partial(server.serve_forever, poll_interval=0.02)
        self._thread = threading.Thread(target=serve, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._gate_open.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            _close_quietly(conn)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the fake first"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    # knobs -----------------------------------------------------------------

    def fail_next(
        self,
        status: int,
        count: int = 1,
        retry_after: float | None = None,
        *,
        code: str | None = None,
        param: str | None = None,
    ) -> None:
        """Answer the next `count` requests with `status` (error `code`/`param` optional)."""
        fault = _Fault("fail", status, retry_after, code=code, param=param)
        with self._lock:
            self._faults.extend(replace(fault) for _ in range(count))

    def delay_next(self, seconds: float, count: int = 1) -> None:
        with self._lock:
            self._faults.extend(_Fault("delay", seconds=seconds) for _ in range(count))

    def drop_next(self, count: int = 1) -> None:
        with self._lock:
            self._faults.extend(_Fault("drop") for _ in range(count))

    def break_stream_next(self, after_chunks: int) -> None:
        """The next streamed answer stops after `after_chunks` SSE chunks (no [DONE])."""
        with self._lock:
            self._faults.append(_Fault("break", after_chunks=after_chunks))

    def hold_stream_next(self, after_chunks: int) -> threading.Event:
        """The next streamed answer pauses after `after_chunks` SSE chunks until the returned
        event is set (or the fake stops): what was sent so far has reached the client."""
        release = threading.Event()
        with self._lock:
            self._stream_holds.append((after_chunks, release))
        return release

    def _next_hold(self) -> tuple[int, threading.Event] | None:
        with self._lock:
            return self._stream_holds.popleft() if self._stream_holds else None

    def writing_time(self, chunks: int) -> float:
        """Seconds from the request to the last of `chunks` stream chunks at the set pace."""
        return self.first_chunk_delay + self.stream_interval * max(0, chunks - 1)

    def gate(self, in_flight: int) -> None:
        """Hold each request until `in_flight` requests are being handled at once (5 s cap)."""
        with self._lock:
            self._gate_size = in_flight
            self._gate_open.clear()

    # records ---------------------------------------------------------------

    @property
    def requests(self) -> list[Recorded]:
        with self._lock:
            return list(self._requests)

    @property
    def embeddings_served(self) -> list[ServedEmbeddings]:
        with self._lock:
            return list(self._served_embeddings)

    def bodies(self, path_suffix: str) -> list[Any]:
        """Bodies of the requests whose path ends with `path_suffix`, in arrival order."""
        return [r.body for r in self.requests if r.path.endswith(path_suffix)]

    # used by the handler ---------------------------------------------------

    def _record(self, rec: Recorded) -> int:
        with self._lock:
            self._requests.append(rec)
            return len(self._requests) - 1

    def _set_status(self, index: int, status: int) -> None:
        with self._lock:
            self._requests[index] = replace(self._requests[index], status=status)

    def _next_fault(self, *, stream: bool) -> _Fault | None:
        with self._lock:
            if not self._faults:
                return None
            if self._faults[0].kind == "break" and not stream:
                return None  # a stream break waits for a streamed request
            return self._faults.popleft()

    def _enter(self) -> None:
        with self._lock:
            self._in_flight += 1
            self.in_flight_peak = max(self.in_flight_peak, self._in_flight)
            if self._in_flight >= self._gate_size:
                self._gate_open.set()
        self._gate_open.wait(timeout=5)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _track(self, conn: socket.socket, alive: bool) -> None:
        with self._lock:
            if alive:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)

    def _count_embeddings(self, served: ServedEmbeddings) -> None:
        with self._lock:
            self.embedding_calls += 1
            self.embedding_inputs += len(served.inputs)
            self._served_embeddings.append(served)


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A running FakeOpenAI; import this fixture into a test module to use it."""
    with FakeOpenAI() as fake:
        yield fake


def _served(raw: Any, tokens: list[int], payload: dict[str, Any]) -> ServedEmbeddings:
    items = raw if isinstance(raw, list) and raw and not isinstance(raw[0], int) else [raw]
    inputs = tuple(x if isinstance(x, str) else " ".join(map(str, x)) for x in items)
    return ServedEmbeddings(inputs, tuple(tokens), int(payload["usage"]["total_tokens"]))


def _close_quietly(conn: socket.socket) -> None:
    with contextlib.suppress(OSError):
        conn.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        conn.close()


# HTTP ---------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like the real service
    fake: FakeOpenAI
    _index = -1

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def setup(self) -> None:
        super().setup()
        self.fake._track(self.connection, alive=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.fake._track(self.connection, alive=False)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    def _serve(self, method: str) -> None:
        body = self._read_body()
        headers = {k.lower(): v for k, v in self.headers.items()}
        self._index = self.fake._record(Recorded(method, self.path, headers, body))
        self.fake._enter()
        try:
            self._answer(method, body, self._index)
        except (BrokenPipeError, ConnectionResetError):
            self._mark(-1)  # the client went away (e.g. it timed out)
        finally:
            self.fake._leave()

    def _mark(self, status: int) -> int:
        """Record the outcome before the client can see it, so tests never race the fake."""
        self.fake._set_status(self._index, status)
        return status

    def _read_body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _answer(self, method: str, body: Any, index: int) -> int:
        stream = isinstance(body, dict) and body.get("stream") is True
        fault = self.fake._next_fault(stream=stream)
        if fault is not None and fault.kind != "break":
            early = self._apply_fault(fault)
            if early is not None:
                return early
        try:
            self._check_auth()
            return self._route(method, body, index, fault)
        except ApiError as err:
            return self._send_json(err.status, err.body)
        except (BrokenPipeError, ConnectionResetError):
            raise
        except Exception as exc:  # a bug in a test's chat_reply: answer 500, keep it for the test
            self.fake.errors.append(exc)
            return self._send_json(500, fault_error(500).body)

    def _apply_fault(self, fault: _Fault) -> int | None:
        """Act on a fault; return the status sent when the request ends here."""
        if fault.kind == "drop":
            self.close_connection = True
            self._mark(-1)
            _close_quietly(self.connection)
            return -1
        if fault.kind == "delay":
            if self.fake._stopping.wait(fault.seconds):
                self.close_connection = True
                return self._mark(-1)
            return None
        err = fault_error(fault.status, code=fault.code, param=fault.param)
        extra = {}
        if fault.retry_after is not None:
            extra = {
                "retry-after": str(math.ceil(fault.retry_after)),
                "retry-after-ms": str(int(fault.retry_after * 1000)),
            }
        return self._send_json(err.status, err.body, extra)

    def _check_auth(self) -> None:
        auth = self.headers.get("Authorization") or ""
        scheme, _, token = auth.partition(" ")
        if scheme != "Bearer" or not token.strip():
            raise ApiError(
                401,
                "You didn't provide an API key. You need to provide your API key in an "
                "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
            )
        if self.fake.api_key is not None and token != self.fake.api_key:
            masked = f"{token[:3]}*****{token[-4:]}" if len(token) > 8 else "*****"
            raise ApiError(401, f"Incorrect API key provided: {masked}.", code="invalid_api_key")

    def _route(self, method: str, body: Any, index: int, fault: _Fault | None) -> int:
        path = self.path.split("?", 1)[0]
        if method == "POST" and path == "/v1/chat/completions":
            validate_chat(body, models=self.fake.models, unsupported=self.fake.unsupported_params)
            reply = self.fake.chat_reply(body)
            chunks = chat_chunks(body, reply, index, split=self.fake.stream_split)
            if body.get("stream"):
                limit = fault.after_chunks if fault is not None else None
                return self._send_sse(chunks, limit)
            if self.fake.pace_whole_replies:  # written at the stream's pace, sent at the end
                self.fake._stopping.wait(self.fake.writing_time(len(list(chunks))))
            return self._send_json(200, chat_completion(body, reply, index))
        if method == "POST" and path == "/v1/embeddings":
            tokens = validate_embeddings(
                body, models=self.fake.models, unsupported=self.fake.unsupported_params
            )
            payload = embeddings_response(body, tokens, self.fake.dimensions)
            self.fake._count_embeddings(_served(body["input"], tokens, payload))
            return self._send_json(200, payload)
        if method == "GET" and path == "/v1/models":
            names = sorted(self.fake.models or {"gpt-4o-mini", "text-embedding-3-small"})
            data = [{"id": n, "object": "model", "created": 0, "owned_by": "fake"} for n in names]
            return self._send_json(200, {"object": "list", "data": data})
        raise ApiError(404, f"Invalid URL ({method} {path})")

    def _send_json(self, status: int, payload: Any, extra: dict[str, str] | None = None) -> int:
        raw = json.dumps(payload).encode()
        self._mark(status)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.send_header("x-request-id", f"req_{next(self.fake._ids)}")
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(raw)
        self.wfile.flush()
        return status

    def _send_sse(self, chunks: Iterator[dict[str, Any]], break_after: int | None) -> int:
        self._mark(200)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        hold = self.fake._next_hold()
        if self.fake.first_chunk_delay:
            self.fake._stopping.wait(self.fake.first_chunk_delay)
        for n, chunk in enumerate(chunks):
            if hold is not None and n == hold[0]:
                while not hold[1].wait(0.05) and not self.fake._stopping.is_set():
                    pass
            if n and self.fake.stream_interval:
                self.fake._stopping.wait(self.fake.stream_interval)
            if break_after is not None and n >= break_after:
                self.close_connection = True
                self._mark(-1)
                _close_quietly(self.connection)
                return -1
            self._write_chunk(f"data: {json.dumps(chunk)}\n\n".encode())
        self._write_chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        return 200

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()
