"""A strict, local fake of Pinecone for tests that drive the real `pinecone` SDK.

    with FakePinecone(dimension=8) as fake:
        pc = Pinecone(api_key=fake.api_key, host=fake.url)    # control plane
        index = pc.index(host=fake.url)                        # data plane
        ...
        assert fake.bodies("/query")[-1]["filter"] == {"rec": {"$eq": "chunk"}}

Data plane (camelCase bodies, namespaces, the default one omitted or ""):
`POST /vectors/upsert`, `POST /query`, `GET /vectors/fetch?ids=..`,
`POST /vectors/delete` (ids, filter or deleteAll), `GET /vectors/list?prefix=..
&limit=..&paginationToken=..`, `POST /describe_index_stats`. Control plane:
`GET /indexes/{name}` and `POST /indexes` (2026-07 schema bodies); the created
index is the one the data plane serves. What is refused, and how matches are
scored, lives in `pinecone_wire`. A request without the right `Api-Key` gets 401.

Knobs apply to the next requests in arrival order: `fail_next(n, status,
retry_after, path=None)` answers with an error (429 carries Retry-After; with
`path`, only requests to that path are failed), `delay_next(seconds)` holds one
answer (`stop()` cuts it short), `gate(n)` holds requests until n are in flight
together (then opens for good), which proves concurrency without timing
assertions; `max_in_flight` is the most requests ever served at once.
`requests` records method, path, query params, lower-cased headers, parsed
body, body size and the status answered.
"""

from __future__ import annotations

import json
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

from tests.servers.pinecone_wire import (
    MAX_UPSERT_BYTES,
    MAX_UPSERT_RECORDS,
    IndexConfig,
    Stored,
    WireError,
    bad,
    check_filter,
    check_ids,
    check_query,
    check_record,
    config_from_create,
    index_model,
    list_page,
    matches,
    rank,
    require_keys,
)

DEFAULT = ""
_INVALID = object()  # a body that is not JSON


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    params: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    size: int
    status: int = 0


class FakePinecone:
    def __init__(
        self,
        *,
        dimension: int = 8,
        metric: str = "dotproduct",
        sparse: bool = True,
        api_key: str = "test-key",
        index_name: str | None = "codecite",
    ) -> None:
        self.api_key = api_key
        self.config: IndexConfig | None = (
            IndexConfig(index_name, dimension, metric, sparse) if index_name else None
        )
        self.namespaces: dict[str, dict[str, Stored]] = {}
        self.requests: list[Recorded] = []
        self._faults: list[tuple[str | None, int, float | None]] = []
        self._delays: deque[float] = deque()
        self._lock = threading.Lock()
        self._flight = threading.Condition()
        self._in_flight = 0
        self._gate = 0
        self.max_in_flight = 0
        self.gate_timeouts = 0
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    # -- lifecycle -----------------------------------------------------------------

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FakePinecone:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakePinecone:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- knobs and inspection --------------------------------------------------------

    def fail_next(
        self,
        n: int = 1,
        status: int = 429,
        retry_after: float | None = 0.0,
        *,
        path: str | None = None,
    ) -> None:
        with self._lock:
            self._faults.extend([(path, status, retry_after)] * n)

    def gate(self, n: int) -> None:
        with self._flight:
            self._gate = n

    def delay_next(self, seconds: float, n: int = 1) -> None:
        with self._lock:
            self._delays.extend([seconds] * n)

    def calls(self, path: str) -> list[Recorded]:
        return [r for r in self.requests if r.path == path]

    def bodies(self, path: str) -> list[Any]:
        return [r.body for r in self.calls(path)]

    def records(self, namespace: str = DEFAULT) -> dict[str, Stored]:
        with self._lock:
            return dict(self.namespaces.get(namespace, {}))

    # -- request handling (called by the handler thread) -----------------------------

    def handle(
        self, method: str, target: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, Any, dict[str, str]]:
        """(status, JSON payload, extra headers) for one request."""
        split = urlsplit(target)
        path, params = split.path, parse_qs(split.query, keep_blank_values=True)
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = _INVALID
        record = Recorded(method, path, params, headers, body, len(raw))
        with self._lock:
            self.requests.append(record)
            position = len(self.requests) - 1
            fault = self._take_fault(path)
            delay = self._delays.popleft() if self._delays else 0.0
        self._enter_flight()
        try:
            if delay:
                self._stopping.wait(delay)
            status, payload, extra = self._answer(method, path, params, headers, body, raw, fault)
        finally:
            with self._flight:
                self._in_flight -= 1
        with self._lock:
            self.requests[position] = replace(record, status=status)
        return status, payload, extra

    def _take_fault(self, path: str) -> tuple[int, float | None] | None:
        for i, (only, status, retry_after) in enumerate(self._faults):
            if only is None or only == path:
                del self._faults[i]
                return status, retry_after
        return None

    def _enter_flight(self) -> None:
        with self._flight:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            self._flight.notify_all()
            if self._gate and not self._flight.wait_for(
                lambda: self._in_flight >= self._gate or self._stopping.is_set(), timeout=10
            ):
                self.gate_timeouts += 1
            self._gate = 0  # opens for good once reached (or timed out)

    def _answer(
        self,
        method: str,
        path: str,
        params: dict[str, list[str]],
        headers: dict[str, str],
        body: Any,
        raw: bytes,
        fault: tuple[int, float | None] | None,
    ) -> tuple[int, Any, dict[str, str]]:
        extra: dict[str, str] = {}
        try:
            if headers.get("api-key") != self.api_key:
                raise WireError(401, "Invalid API Key")
            if fault is not None:
                if fault[0] == 429 and fault[1] is not None:
                    extra["Retry-After"] = f"{fault[1]:g}"
                raise WireError(fault[0], "injected fault")
            if body is _INVALID:
                raise bad("Body is not valid JSON")
            payload = self._route(method, path, params, body, len(raw))
            status = 201 if (method, path) == ("POST", "/indexes") else 200
        except WireError as exc:
            status, payload = exc.status, _error_body(exc)
        return status, payload, extra

    def _route(
        self, method: str, path: str, params: dict[str, list[str]], body: Any, size: int
    ) -> Any:
        routes: dict[tuple[str, str], Callable[[], Any]] = {
            ("POST", "/vectors/upsert"): lambda: self._upsert(body, size),
            ("POST", "/query"): lambda: self._query(body),
            ("GET", "/vectors/fetch"): lambda: self._fetch(params),
            ("POST", "/vectors/delete"): lambda: self._delete(body),
            ("GET", "/vectors/list"): lambda: self._list(params),
            ("POST", "/describe_index_stats"): lambda: self._stats(body),
            ("POST", "/indexes"): lambda: self._create_index(body),
        }
        if (method, path) in routes:
            return routes[(method, path)]()
        if method == "GET" and path.startswith("/indexes/"):
            return self._describe_index(unquote(path.removeprefix("/indexes/")))
        raise WireError(404, f"No route for {method} {path}")

    def _index(self) -> IndexConfig:
        if self.config is None:
            raise WireError(404, "Index not found")
        return self.config

    @staticmethod
    def _namespace(raw: Any) -> str:
        name = raw if isinstance(raw, str) else DEFAULT
        return DEFAULT if name == "__default__" else name

    def _upsert(self, body: Any, size: int) -> dict[str, Any]:
        config = self._index()
        body = require_keys(body, {"vectors", "namespace"}, "upsert request")
        vectors = body.get("vectors")
        if not isinstance(vectors, list) or not vectors:
            raise bad("vectors must be a non-empty list")
        if len(vectors) > MAX_UPSERT_RECORDS:
            raise bad(f"Upsert of {len(vectors)} records exceeds the limit of 1000")
        if size > MAX_UPSERT_BYTES:
            raise bad(f"Request size {size} bytes exceeds the limit of 2MB")
        checked = [check_record(v, config) for v in vectors]
        with self._lock:
            space = self.namespaces.setdefault(self._namespace(body.get("namespace")), {})
            space.update(checked)
        return {"upsertedCount": len(checked)}

    def _query(self, body: Any) -> dict[str, Any]:
        config = self._index()
        query = check_query(body, config)
        ns = self._namespace(query.get("namespace"))
        with self._lock:
            space = dict(self.namespaces.get(ns, {}))
        return {"matches": rank(config, space, query), "namespace": ns, "usage": {"readUnits": 5}}

    def _fetch(self, params: dict[str, list[str]]) -> dict[str, Any]:
        self._index()
        ids = check_ids(params.get("ids", []))
        ns = self._namespace(params.get("namespace", [DEFAULT])[0])
        with self._lock:
            space = self.namespaces.get(ns, {})
            found = {rid: space[rid].wire(rid) for rid in ids if rid in space}
        return {"vectors": found, "namespace": ns, "usage": {"readUnits": 1}}

    def _delete(self, body: Any) -> dict[str, Any]:
        self._index()
        body = require_keys(body, {"ids", "deleteAll", "filter", "namespace"}, "delete request")
        selectors = [k for k in ("ids", "deleteAll", "filter") if body.get(k) not in (None, False)]
        if len(selectors) != 1:
            raise bad("Delete needs exactly one of ids, deleteAll or filter")
        ids = check_ids(body["ids"]) if "ids" in body else []
        if "filter" in body:
            check_filter(body["filter"])
        with self._lock:
            space = self.namespaces.setdefault(self._namespace(body.get("namespace")), {})
            if body.get("deleteAll"):
                space.clear()
            elif "filter" in body:
                for rid in [
                    r for r, rec in space.items() if matches(body["filter"], rec.metadata or {})
                ]:
                    del space[rid]
            for rid in ids:
                space.pop(rid, None)
        return {}

    def _list(self, params: dict[str, list[str]]) -> dict[str, Any]:
        self._index()
        ns = self._namespace(params.get("namespace", [DEFAULT])[0])
        with self._lock:
            ids = list(self.namespaces.get(ns, {}))
        return {**list_page(ids, params), "namespace": ns, "usage": {"readUnits": 1}}

    def _stats(self, body: Any) -> dict[str, Any]:
        config = self._index()
        body = require_keys(body or {}, {"filter"}, "describe_index_stats request")
        if body.get("filter"):
            raise bad("describe_index_stats does not accept a filter on serverless indexes")
        with self._lock:
            counts = {
                ns or "__default__": len(space) for ns, space in self.namespaces.items() if space
            }
        return {
            "namespaces": {ns: {"vectorCount": n} for ns, n in counts.items()},
            "dimension": config.dimension,
            "indexFullness": 0.0,
            "totalVectorCount": sum(counts.values()),
            "metric": config.metric,
            "vectorType": "dense",
        }

    def _describe_index(self, name: str) -> dict[str, Any]:
        if self.config is None or self.config.name != name:
            raise WireError(404, f"Resource {name} not found")
        return index_model(self.config, self.url)

    def _create_index(self, body: Any) -> dict[str, Any]:
        config = config_from_create(body)
        if self.config is not None and self.config.name == config.name:
            raise WireError(409, f"Resource {config.name} already exists")
        self.config = config
        return index_model(config, self.url)


def _handler(fake: FakePinecone) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # Headers and body go out in two writes: without this, Nagle + delayed ACK
            # stall every answer by ~40 ms.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, payload, extra = fake.handle(self.command, self.path, headers, raw)
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in extra.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_DELETE = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def _error_body(exc: WireError) -> dict[str, Any]:
    if exc.status == 400:
        return {"code": 3, "message": exc.message, "details": []}
    return {"error": {"code": str(exc.status), "message": exc.message}, "status": exc.status}


@pytest.fixture
def fake_pinecone() -> Iterator[FakePinecone]:
    with FakePinecone() as fake:
        yield fake
