"""Raw-socket HTTP for the abuse tests of our servers (Slack HTTP mode, push webhooks).

The abuse tests speak bytes, not urllib: a stalled header, a lying Content-Length,
a half-closed socket are things an HTTP library will not send.
"""

from __future__ import annotations

import http.client
import socket
from dataclasses import dataclass
from typing import Protocol

HANG_GUARD = 20.0  # seconds: only so that a broken server fails a test instead of hanging it


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes


class Connectable(Protocol):
    def connect(self) -> socket.socket: ...


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD)


def raw_request(
    body: bytes,
    *,
    path: str,
    headers: dict[str, str] | None = None,
    method: str = "POST",
    length: str | None = None,
) -> bytes:
    """Request bytes as written: `length` overrides Content-Length ("" leaves it out)."""
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
    for name, value in (headers or {}).items():
        lines.append(f"{name}: {value}")
    declared = str(len(body)) if length is None else length
    if declared:
        lines.append(f"Content-Length: {declared}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def read_reply(sock: socket.socket, method: str = "POST") -> Reply:
    response = http.client.HTTPResponse(sock, method=method)
    response.begin()
    body = response.read()
    return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, body)


def exchange(served: Connectable, data: bytes, *, half_close: bool = False) -> Reply:
    """One request on a fresh connection; `half_close` ends our side after sending."""
    with served.connect() as sock:
        sock.sendall(data)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        return read_reply(sock)


def closed_by_server(sock: socket.socket) -> bool:
    """True once the server has closed: EOF or a reset (waits up to HANG_GUARD)."""
    sock.settimeout(HANG_GUARD)
    try:
        while sock.recv(65536):
            pass
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False
    return True
