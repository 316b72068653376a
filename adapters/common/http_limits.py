"""What one client may cost an HTTP server of ours: a slot, a deadline, a byte budget.

Shared by the Slack HTTP server and the push-webhook server (see http_handler.py for
the request handler that puts these to work).

- `HTTPLimits`: the numbers, overridable per server (tests use short ones).
- `BoundedServer`: a thread per connection, but at most `max_connections` of them, and
  at most `max_per_client` for one client address; a connection beyond either is handed
  to the overflow (http_overflow.py), where a health check is still answered and
  anything else gets 503.
- `DeadlineReader`: the socket as a raw stream whose reads share one deadline and
  one byte budget per request, so a client dripping a byte at a time (slow loris)
  or idling on keep-alive is cut off after `request_timeout`, not when it pleases.
- `declared_length`: Content-Length judged before a byte of the body is read.
- `linger`: after an error reply, drain before closing, so the reply is not lost.
- `describe_body`: all a log may say about a body nobody vouched for.
"""

from __future__ import annotations

import hashlib
import io
import logging
import socket
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from adapters.common.http_overflow import Overflow

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

log = logging.getLogger(__name__)

REFUSAL_LOG_SECONDS = 10.0  # at most one "connections refused" line this often
_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n"
    b"Retry-After: 1\r\nConnection: close\r\n\r\nbusy\n"
)


@dataclass(frozen=True, slots=True)
class HTTPLimits:
    # The defaults suit Slack's traffic; other servers pass their own (webhook.py).
    max_connections: int = 64  # handler threads; Slack's own traffic needs a handful
    # One address's share: a client holding idle connections cannot take every slot (behind
    # a proxy every client has its address: Slack's acknowledgements take milliseconds).
    max_per_client: int = 16
    probe_slots: int = 4  # health checks answered beyond the slots (see http_overflow.py)
    overflow_wait: float = 1.0  # how long an over-capacity connection may take to say what it is
    read_timeout: float = 5.0  # longest silence while reading a request or writing a reply
    request_timeout: float = 10.0  # keep-alive idle + request line + headers + body
    max_body: int = 1_000_000  # Slack payloads are far smaller
    max_header_bytes: int = 64_000  # request line and headers together, roughly
    linger_timeout: float = 2.0  # after an error reply, how long to drain what still arrives


@dataclass(frozen=True, slots=True)
class Refusal:
    status: int
    reason: str


class OverBudget(ConnectionError):
    """A request sent more bytes than its headers and declared body allow."""


class DeadlineReader(io.RawIOBase):
    def __init__(self, sock: socket.socket, limits: HTTPLimits) -> None:
        super().__init__()
        self._sock = sock
        self._limits = limits
        self.restart()

    def restart(self) -> None:
        """A new request begins: a fresh deadline and byte budget."""
        self._started = time.monotonic()
        self._spent = 0
        self.allow(self._limits)

    def allow(self, limits: HTTPLimits) -> None:
        """The routed request's own time and body budgets, counted from its start."""
        self._deadline = self._started + limits.request_timeout
        self._budget = limits.max_header_bytes + limits.max_body - self._spent

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("request deadline passed")
        if self._budget <= 0:
            raise OverBudget("request larger than its limits")
        self._sock.settimeout(min(self._limits.read_timeout, remaining))
        with memoryview(buffer) as view:
            received = self._sock.recv_into(view[: self._budget])
        self._budget -= received
        self._spent += received
        return received


def declared_length(headers: Message, max_body: int) -> int | Refusal:
    """The body's length from its headers; anything unusual is refused before reading."""
    if headers.get("Transfer-Encoding") is not None:
        return Refusal(400, "Transfer-Encoding is not accepted; send Content-Length")
    values = {v.strip() for v in headers.get_all("Content-Length") or []}
    if not values:
        return Refusal(411, "Content-Length required")
    if len(values) > 1:
        return Refusal(400, "conflicting Content-Length headers")
    text = values.pop()
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        return Refusal(400, "malformed Content-Length")
    length = int(text)
    if length > max_body:
        return Refusal(413, f"body larger than {max_body} bytes")
    return length


def describe_body(body: bytes) -> str:
    """What a log may say about a body nobody vouched for."""
    return f"{len(body)} bytes, sha256 {hashlib.sha256(body).hexdigest()[:16]}"


def linger(sock: socket.socket, limits: HTTPLimits) -> None:
    """Half-close, then drain what the client still sends, for `linger_timeout` at most.

    The staged close of RFC 9112 section 9.6: closing with unread input resets the
    connection, and some stacks and proxies then drop the reply still in flight, so a
    client refused for its headers alone would see no answer.
    """
    try:
        sock.shutdown(socket.SHUT_WR)
        deadline = time.monotonic() + limits.linger_timeout
        budget = limits.max_header_bytes + limits.max_body
        while budget > 0 and (remaining := deadline - time.monotonic()) > 0:
            sock.settimeout(remaining)
            chunk = sock.recv(min(65536, budget))
            if not chunk:
                return
            budget -= len(chunk)
    except OSError:
        return


class BoundedServer(ThreadingHTTPServer):
    daemon_threads = True
    # A burst of events would overflow the default backlog of 5; dropped connections are
    # retried by the client's TCP stack only after a second.
    request_queue_size = 128

    def __init__(
        self,
        address: tuple[str, int],
        handler: Callable[..., BaseHTTPRequestHandler],
        limits: HTTPLimits,
        *,
        name: str,
        probes: tuple[Callable[..., BaseHTTPRequestHandler], Sequence[str]] | None = None,
    ) -> None:
        """`probes`: the handler for health checks beyond the slots, and their paths."""
        self._overflow: Overflow | None = None  # before binding: a failed bind closes the server
        super().__init__(address, handler)
        self.name = name  # names the server in its log lines: "slack http", "webhooks"
        self.max_connections = limits.max_connections
        self._per_client_max = limits.max_per_client
        self._slots = threading.BoundedSemaphore(limits.max_connections)
        self._probe_slots = threading.BoundedSemaphore(limits.probe_slots)
        self._clients: Counter[str] = Counter()
        self._clients_lock = threading.Lock()
        self._refused = 0
        self._refusal_logged = 0.0
        if probes is not None:
            self._probe_handler = probes[0]
            self._overflow = Overflow(
                probes[1], self._serve_probe, self._refuse, wait=limits.overflow_wait, name=name
            )

    def process_request(self, request: Any, client_address: Any) -> None:
        client = str(client_address[0])
        if not self._take(client):
            if self._overflow is not None:
                self._overflow.hold(request)
            else:
                self._refuse(request)
            return
        try:
            super().process_request(request, client_address)  # starts the connection's thread
        except BaseException:
            self._give_back(client)
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:  # noqa: BLE001 -- socketserver's contract: to handle_error
            self.handle_error(request, client_address)
        finally:
            # Freed before the socket closes: a client that sees the close may reconnect at once.
            self._give_back(str(client_address[0]))
            self.shutdown_request(request)

    def server_close(self) -> None:
        if self._overflow is not None:
            self._overflow.close()
        super().server_close()

    def _take(self, client: str) -> bool:
        """A slot for `client`, within its share; False when there is none."""
        with self._clients_lock:
            if self._clients[client] >= self._per_client_max:
                return False
            if not self._slots.acquire(blocking=False):
                return False
            self._clients[client] += 1
            return True

    def _give_back(self, client: str) -> None:
        with self._clients_lock:
            self._clients[client] -= 1
            if self._clients[client] <= 0:
                del self._clients[client]
            self._slots.release()

    def _serve_probe(self, request: socket.socket) -> bool:
        """A health check beyond the slots, on a probe slot (False: none is free)."""
        if not self._probe_slots.acquire(blocking=False):
            return False

        def serve() -> None:
            try:
                address = request.getpeername()
                self._probe_handler(request, address, self)
            except Exception:  # noqa: BLE001 -- as a connection's thread would
                self.handle_error(request, ("?", 0))
            finally:
                self._probe_slots.release()
                self.shutdown_request(request)

        threading.Thread(target=serve, name=f"{self.name} probe", daemon=True).start()
        return True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Never a traceback on stderr for what a client did; our own faults are logged in full."""
        exc = sys.exc_info()[1]
        if isinstance(exc, OSError):  # timeouts, resets, broken pipes, OverBudget
            log.debug("%s: connection closed: %s", self.name, type(exc).__name__)
        else:
            log.error("%s: the request handler failed", self.name, exc_info=True)

    def _refuse(self, request: socket.socket) -> None:
        try:
            request.setblocking(False)
            request.send(_BUSY)
        except OSError:
            pass
        self.shutdown_request(request)
        self._refused += 1
        now = time.monotonic()
        if now - self._refusal_logged >= REFUSAL_LOG_SECONDS:
            log.warning(
                "%s: all %d connection slots busy; refused %d connection(s) with 503",
                self.name,
                self.max_connections,
                self._refused,
            )
            self._refused, self._refusal_logged = 0, now
