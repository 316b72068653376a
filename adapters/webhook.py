"""Push webhooks that schedule an immediate re-ingest (GitHub's format).

`POST /webhooks/github` with `X-Hub-Signature-256: sha256=<hex HMAC of the raw
body with CODECITE_WEBHOOK_SECRET>`. A push to a configured repository records
a quick re-ingest job (`QueuedReindex`, `Core.queue_reindex`) and is answered 202 at
once: the process that receives it (the `web` process, with the routable port) never
ingests; the scheduler's job runner claims the job and runs it (`bot.jobs`). A push
while a job of that repository is still queued joins it. A push that arrives while the
job table cannot be written (the database away) is answered 503 with `Retry-After` and
kept: the job is recorded as soon as the table answers again (`PendingPushes`), for the
scheduler's runner to take at its next look. The route sits on the
process's one HTTP server (`webhook_route`, beside /healthz and /readyz), or on
a port of its own (`WebhookServer`) in a process that has no web port.

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
import time
from collections.abc import Callable
from typing import Any, Protocol

from adapters.common.http_handler import JSON, GuardedHandler
from adapters.common.http_limits import HTTPLimits, Refusal, describe_body
from adapters.common.http_routes import Route, RoutedServer, health_routes
from bot.core import Core
from bot.errors import BotError, StoreError

log = logging.getLogger(__name__)

MAX_BODY = 5_000_000  # GitHub caps payloads at 25 MB; pushes are far smaller
PATH = "/webhooks/github"
LABEL = "webhooks"  # how its log lines name this server
# GitHub's deliveries are few, but their payloads large and its timeout 10 s.
LIMITS = HTTPLimits(max_connections=32, request_timeout=30.0, max_body=MAX_BODY)

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


RETRY_AFTER = 30  # seconds a sender is asked to wait when a push could not be recorded
KEEP_TRYING_EVERY = 5.0  # seconds between two tries of recording the pushes kept


class Deferred(Exception):
    """The push was kept, not recorded yet: the sender is told 503 with Retry-After."""


class PendingPushes:
    """Repositories whose push could not be recorded yet; a thread records them once the
    job table answers (one job each, however many pushes came meanwhile)."""

    def __init__(self, record: Callable[[str], bool], *, every: float = KEEP_TRYING_EVERY):
        self._record = record
        self._every = every
        self._names: set[str] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def keep(self, name: str) -> None:
        with self._lock:
            self._names.add(name)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._retry, name="pending-pushes", daemon=True
                )
                self._thread.start()

    def _retry(self) -> None:
        while True:
            time.sleep(self._every)
            with self._lock:
                names = sorted(self._names)
            for name in names:
                try:
                    self._record(name)
                except BotError as exc:
                    log.info("push of %s still kept: %s", name, exc.detail or exc.user_message)
                    break  # the table is still away: the others would fail alike
                with self._lock:
                    self._names.discard(name)
                log.info(
                    "push webhook: re-ingest job queued for %s (kept while the job table was away)",
                    name,
                )
            with self._lock:
                if not self._names:
                    self._thread = None
                    return


class PushTarget(Protocol):
    """What a push webhook needs: the configured repository a push names, and a way to
    have it re-ingested soon (`QueuedReindex`)."""

    def repo_for_remote(self, clone_urls: set[str]) -> str | None: ...
    def trigger_now(self, name: str) -> bool: ...


class QueuedReindex:
    """A push records a re-ingest job for the scheduler's runner; nothing is ingested here."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.pending = PendingPushes(self._record)

    def repo_for_remote(self, clone_urls: set[str]) -> str | None:
        from adapters.schedule import repo_for_remote  # APScheduler: not before a push

        return repo_for_remote(self.core.config.repos, clone_urls)

    def trigger_now(self, name: str) -> bool:
        """Record the job; Deferred (and kept) when the job table cannot be written now."""
        try:
            return self._record(name)
        except StoreError as exc:
            log.warning(
                "push webhook for %s kept (the job table is away): %s",
                name,
                exc.detail or exc.user_message,
            )
            self.pending.keep(name)
            raise Deferred(name) from exc

    def _record(self, name: str) -> bool:
        return self.core.queue_reindex(name, trigger="webhook")


def webhook_route(target: PushTarget, secret: str, *, limits: HTTPLimits = LIMITS) -> Route:
    """`POST /webhooks/github`, verified before its body is parsed; refusals in JSON."""
    key = secret.encode()

    def handle(request: GuardedHandler, query: str) -> None:
        length = request.body_length()
        if length is None:
            return
        signature = request.headers.get("X-Hub-Signature-256")
        reason = signature_refusal(signature)
        if reason is not None or signature is None:
            request.refuse(Refusal(401, reason or "unsigned"), f"{length} bytes declared")
            return
        body = request.read_body(length)
        if body is None:
            return
        if not signature_ok(key, body, signature):
            request.refuse(Refusal(401, "signature mismatch"), describe_body(body))
            return
        payload = _json_object(body)
        if payload is None:
            request.refuse(Refusal(400, "body is not a JSON object"), describe_body(body))
            return
        headers: dict[str, Any] = dict(JSON)
        try:
            status, reply = _handle_event(
                target, request.headers.get("X-GitHub-Event", ""), payload
            )
        except Deferred:
            status, reply = 503, {"error": "not recorded yet; kept, and queued once it can be"}
            headers["Retry-After"] = str(RETRY_AFTER)
        except Exception:  # a fault of ours or the scheduler's, not the sender's
            log.exception("%s: a signed delivery could not be handled", LABEL)
            status, reply = 500, {"error": "internal error"}
        request.send(status, reply, headers)

    return Route("POST", PATH, handle, limits=limits, json=True)


class WebhookServer(RoutedServer):
    """Push webhooks and health on a port of their own (a process with no web port)."""

    def __init__(
        self,
        target: PushTarget,
        secret: str,
        *,
        port: int,
        host: str = "0.0.0.0",  # noqa: S104 - GitHub must reach it; every request is signed
        limits: HTTPLimits = LIMITS,
        readiness: Callable[[], str] = lambda: "",
    ) -> None:
        routes = [*health_routes(readiness), webhook_route(target, secret, limits=limits)]
        super().__init__(routes, host=host, port=port, limits=limits, label=LABEL)

    def start(self) -> None:
        super().start()
        log.info("push webhooks on :%d%s", self.port, PATH)


def _handle_event(
    target: PushTarget, event: str, payload: dict[str, Any]
) -> tuple[int, dict[str, Any]]:
    if event == "ping":
        return 200, {"ok": True}
    if event != "push":
        return 202, {"ignored": event}
    name = target.repo_for_remote(clone_urls(payload))
    if name is None or not target.trigger_now(name):
        return 404, {"error": "repository not configured"}
    log.info("push webhook: re-ingest job queued for %s", name)
    return 202, {"scheduled": name}


def _json_object(body: bytes) -> dict[str, Any] | None:
    try:
        payload = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return payload if isinstance(payload, dict) else None
