"""Connections beyond the server's slots: health checks still answered, everything else 503.

When every connection slot is taken (or one client holds its share of them, see
`BoundedServer`), a new connection is handed here instead of being refused blind: one
thread watches such connections for their first bytes, at most `wait` seconds each.
A request line for a health route (`GET /healthz`, `GET /readyz`, `GET /metrics`) is
served on a probe slot of its own (a few, closed after the one request), so a load
balancer still sees the process alive and whether it is ready while idle or hostile
clients fill the pool; anything else, or nothing in time, gets the usual 503 with
`Retry-After`. No byte of a connection is read here, only peeked at: the probe's
handler reads its request as any other would.
"""

from __future__ import annotations

import contextlib
import logging
import selectors
import socket
import threading
import time
from collections.abc import Callable, Iterable

log = logging.getLogger(__name__)

PENDING_MAX = 64  # connections waiting for their first bytes; beyond, refused at once
LOOK_SECONDS = 0.05  # how often the watching thread looks at the deadlines


class Overflow:
    """`hold(sock)`: decide what an over-capacity connection gets (see the module doc)."""

    def __init__(
        self,
        paths: Iterable[str],
        serve: Callable[[socket.socket], bool],
        refuse: Callable[[socket.socket], None],
        *,
        wait: float,
        name: str,
    ) -> None:
        """`serve(sock)` answers a health request on a probe slot (False: none free);
        `refuse(sock)` answers 503 and closes."""
        self._lines = tuple(f"GET {path}".encode("ascii") for path in paths)
        self._longest = max(len(line) for line in self._lines) + 1
        self._serve = serve
        self._refuse = refuse
        self._wait = wait
        self._incoming: list[socket.socket] = []
        self._lock = threading.Lock()
        self._closed = False
        self._selector = selectors.DefaultSelector()
        self._deadlines: dict[socket.socket, float] = {}
        self._thread = threading.Thread(target=self._watch, name=f"{name} overflow", daemon=True)
        self._thread.start()

    def hold(self, sock: socket.socket) -> None:
        with self._lock:
            if self._closed or len(self._incoming) + len(self._deadlines) >= PENDING_MAX:
                full = True
            else:
                full = False
                self._incoming.append(sock)
        if full:
            self._refuse(sock)

    def close(self) -> None:
        with self._lock:
            self._closed = True
        self._thread.join(timeout=5)

    def _watch(self) -> None:
        while True:
            with self._lock:
                closed, incoming, self._incoming = self._closed, self._incoming, []
            for sock in incoming:
                self._deadlines[sock] = time.monotonic() + self._wait
                self._selector.register(sock, selectors.EVENT_READ)
            if closed:
                for sock in list(self._deadlines):
                    self._decided(sock, self._refuse)
                self._selector.close()
                return
            for key, _ in self._selector.select(timeout=LOOK_SECONDS):
                if isinstance(key.fileobj, socket.socket):
                    self._judge(key.fileobj)
            now = time.monotonic()
            for sock in [s for s, at in self._deadlines.items() if at <= now]:
                self._decided(sock, self._refuse)  # nothing (or not enough) came in time

    def _judge(self, sock: socket.socket) -> None:
        try:
            seen = sock.recv(self._longest, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except BlockingIOError:
            return
        except OSError:
            seen = b""
        if not seen:  # the client went away
            self._decided(sock, _close)
            return
        if any(_asks_for(seen, line) for line in self._lines):
            self._decided(sock, self._probe)
        elif not any(line.startswith(seen) for line in self._lines):
            self._decided(sock, self._refuse)
        # else a health request line still arriving: wait for the rest

    def _probe(self, sock: socket.socket) -> None:
        if not self._serve(sock):
            self._refuse(sock)

    def _decided(self, sock: socket.socket, outcome: Callable[[socket.socket], None]) -> None:
        self._deadlines.pop(sock, None)
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(sock)
        outcome(sock)


def _asks_for(seen: bytes, line: bytes) -> bool:
    """`seen` starts with the request line `line` and its path ends there."""
    return seen.startswith(line) and len(seen) > len(line) and seen[len(line)] in b" ?"


def _close(sock: socket.socket) -> None:
    try:
        sock.close()
    except OSError:
        log.debug("closing an abandoned connection failed", exc_info=True)
