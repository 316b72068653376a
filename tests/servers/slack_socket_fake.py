"""A local Socket Mode endpoint: the WebSocket Slack hands out from apps.connections.open."""

from __future__ import annotations

import itertools
import json
import threading
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.sync.server import ServerConnection, serve


class FakeSocketMode:
    """A Socket Mode WebSocket endpoint: says hello, sends envelopes, collects acks.

    Set `slack.socket_url = socket.url` (FakeSlack) so apps.connections.open hands it out.
    """

    def __init__(self) -> None:
        self.acks: dict[str, dict[str, Any]] = {}
        self._conn: ServerConnection | None = None
        self._ids = itertools.count(1)
        self._cond = threading.Condition()
        self._server = serve(self._session, "127.0.0.1", 0, compression=None)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeSocketMode:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._thread.join(timeout=5)

    @property
    def url(self) -> str:
        host, port = self._server.socket.getsockname()[:2]
        return f"ws://{host}:{port}/link"

    def wait_connected(self, timeout: float = 15.0) -> None:
        with self._cond:
            if not self._cond.wait_for(lambda: self._conn is not None, timeout):
                raise AssertionError("the app never connected")

    def send(self, kind: str, payload: dict[str, Any], *, retry_attempt: int = 0) -> str:
        """Deliver one envelope to the connected app; returns its envelope id."""
        self.wait_connected()
        envelope_id = f"env-{next(self._ids)}"
        envelope = {
            "envelope_id": envelope_id,
            "type": kind,
            "payload": payload,
            "accepts_response_payload": kind != "events_api",
            "retry_attempt": retry_attempt,
            "retry_reason": "timeout" if retry_attempt else "",
        }
        assert self._conn is not None
        self._conn.send(json.dumps(envelope))
        return envelope_id

    def wait_ack(self, envelope_id: str, timeout: float = 15.0) -> dict[str, Any]:
        with self._cond:
            if not self._cond.wait_for(lambda: envelope_id in self.acks, timeout):
                raise AssertionError(f"no ack for {envelope_id}")
            return self.acks[envelope_id]

    def _session(self, ws: ServerConnection) -> None:
        ws.send(json.dumps({"type": "hello", "num_connections": 1, "debug_info": {}}))
        with self._cond:
            self._conn = ws
            self._cond.notify_all()
        try:
            for raw in ws:
                ack = json.loads(raw)
                with self._cond:
                    self.acks[str(ack.get("envelope_id"))] = ack
                    self._cond.notify_all()
        except ConnectionClosed:
            return
