"""Push webhooks that schedule an immediate re-ingest (GitHub's format).

`POST /webhooks/github` with `X-Hub-Signature-256: sha256=<hex HMAC of the raw
body with CODECITE_WEBHOOK_SECRET>`. A push to a configured repository runs
its job now. `GET /healthz` answers 200 for load balancers.

The server lives under the same limits as the Slack HTTP server
(adapters/common/http_limits.py): a bounded number of connections (503 beyond), a
deadline per request, and each step judged before the next is paid for:
framing (Content-Length: 411/400/413), the signature header's shape (401),
then the body is read (a stall: 408; a short body: 400) and its HMAC checked
(401). Only a signed body is parsed, and it must be a JSON object (400).
Nothing of an unauthenticated body is logged beyond its size and a short hash.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import threading
from typing import Any

from adapters.common.http_handler import GuardedHandler
from adapters.common.http_limits import BoundedServer, HTTPLimits, Refusal, describe_body
from adapters.schedule import IngestScheduler

log = logging.getLogger(__name__)

MAX_BODY = 5_000_000  # GitHub caps payloads at 25 MB; pushes are far smaller
PATH = "/webhooks/github"
HEALTH_PATH = "/healthz"
LABEL = "webhooks"  # how its log lines name this server
# GitHub's deliveries are few, but their payloads large and its timeout 10 s.
LIMITS = HTTPLimits(max_connections=32, request_timeout=30.0, max_body=MAX_BODY)
POLL_SECONDS = 0.1  # how soon stop() takes effect

_SIGNATURE = re.compile(r"sha256=[0-9a-f]{64}")  # GitHub sends a lowercase hex digest


def signature_ok(secret: bytes, body: bytes, header: str) -> bool:
    if not _SIGNATURE.fullmatch(header):
        return False
    expected = hmac.new(secret, body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header.removeprefix("sha256="))


def signature_refusal(header: str | None) -> str | None:
    """Why the signature header alone condemns a request, or None when the body is worth reading."""
    if header is None:
        return "missing signature"
    if not _SIGNATURE.fullmatch(header):
        return "malformed signature"
    return None


def clone_urls(payload: dict[str, Any]) -> set[str]:
    repo = payload.get("repository") or {}
    keys = ("clone_url", "ssh_url", "git_url", "html_url", "url")
    return {str(repo[k]) for k in keys if isinstance(repo, dict) and repo.get(k)}


class WebhookServer:
    def __init__(
        self,
        scheduler: IngestScheduler,
        secret: str,
        *,
        port: int,
        host: str = "0.0.0.0",  # noqa: S104 - GitHub must reach it; every request is signed
        limits: HTTPLimits = LIMITS,
    ) -> None:
        attributes = {"scheduler": scheduler, "secret": secret.encode(), "limits": limits}
        handler = type("Handler", (_Handler,), attributes)
        self._server = BoundedServer((host, port), handler, limits.max_connections, name=LABEL)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> None:
        self._thread = threading.Thread(target=self._serve, name="webhooks", daemon=True)
        self._thread.start()
        log.info("push webhooks on :%d%s", self.port, PATH)

    def _serve(self) -> None:
        self._server.serve_forever(poll_interval=POLL_SECONDS)

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)


class _Handler(GuardedHandler):
    scheduler: IngestScheduler
    secret: bytes
    label = LABEL
    limits = LIMITS

    def do_GET(self) -> None:
        if self._route()[0] == HEALTH_PATH:
            self._reply(200, {"ok": True})
        else:
            self._reply(404, {"error": "not found"})

    def do_POST(self) -> None:
        if self._route()[0] != PATH:
            self._refuse(Refusal(404, "not found"))
            return
        length = self._declared_length()
        if length is None:
            return
        signature = self.headers.get("X-Hub-Signature-256")
        reason = signature_refusal(signature)
        if reason is not None or signature is None:
            self._refuse(Refusal(401, reason or "unsigned"), f"{length} bytes declared")
            return
        body = self._read_body(length)
        if body is None:
            return
        if not signature_ok(self.secret, body, signature):
            self._refuse(Refusal(401, "signature mismatch"), describe_body(body))
            return
        payload = _json_object(body)
        if payload is None:
            self._refuse(Refusal(400, "body is not a JSON object"), describe_body(body))
            return
        try:
            status, reply = self._handle_event(self.headers.get("X-GitHub-Event", ""), payload)
        except Exception:  # a fault of ours or the scheduler's, not the sender's
            log.exception("%s: a signed delivery could not be handled", LABEL)
            status, reply = 500, {"error": "internal error"}
        self._reply(status, reply)

    def _handle_event(self, event: str, payload: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if event == "ping":
            return 200, {"ok": True}
        if event != "push":
            return 202, {"ignored": event}
        name = self.scheduler.repo_for_remote(clone_urls(payload))
        if name is None or not self.scheduler.trigger_now(name):
            return 404, {"error": "repository not configured"}
        log.info("push webhook: re-ingesting %s now", name)
        return 202, {"scheduled": name}

    def _send_refusal(self, status: int, text: str) -> None:
        self._reply(status, {"error": text})

    def _reply(self, status: int, payload: dict[str, Any]) -> None:
        self._send(status, payload, {"Content-Type": "application/json"})


def _json_object(body: bytes) -> dict[str, Any] | None:
    try:
        payload = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return payload if isinstance(payload, dict) else None
