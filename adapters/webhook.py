"""Push webhooks that schedule an immediate re-ingest (GitHub's format).

`POST /webhooks/github` with `X-Hub-Signature-256: sha256=<hex HMAC of the raw
body with CODECITE_WEBHOOK_SECRET>`. A push to a configured repository runs
its job now; anything unsigned or mis-signed is refused before the body is
parsed. `GET /healthz` answers 200 for load balancers.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from bot.schedule import IngestScheduler

log = logging.getLogger(__name__)

MAX_BODY = 5_000_000  # GitHub caps payloads at 25 MB; pushes are far smaller
PATH = "/webhooks/github"


def signature_ok(secret: bytes, body: bytes, header: str) -> bool:
    if not header.startswith("sha256="):
        return False
    expected = hmac.new(secret, body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header.removeprefix("sha256="))


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
    ) -> None:
        handler = type("Handler", (_Handler,), {"scheduler": scheduler, "secret": secret.encode()})
        self._server = ThreadingHTTPServer((host, port), handler)
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="webhooks", daemon=True
        )
        self._thread.start()
        log.info("push webhooks on :%d%s", self.port, PATH)

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class _Handler(BaseHTTPRequestHandler):
    scheduler: IngestScheduler
    secret: bytes

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("webhook %s", format % args)

    def do_GET(self) -> None:
        if self.path == "/healthz":
            self._reply(200, {"ok": True})
        else:
            self._reply(404, {"error": "not found"})

    def do_POST(self) -> None:
        if self.path != PATH:
            self._reply(404, {"error": "not found"})
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length <= 0 or length > MAX_BODY:
            self._reply(413 if length > MAX_BODY else 400, {"error": "bad body"})
            return
        body = self.rfile.read(length)
        if not signature_ok(self.secret, body, self.headers.get("X-Hub-Signature-256", "")):
            log.warning("webhook refused: bad signature")
            self._reply(401, {"error": "bad signature"})
            return
        event = self.headers.get("X-GitHub-Event", "")
        if event == "ping":
            self._reply(200, {"ok": True})
            return
        if event != "push":
            self._reply(202, {"ignored": event})
            return
        try:
            payload = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            self._reply(400, {"error": "bad json"})
            return
        name = self.scheduler.repo_for_remote(clone_urls(payload))
        if name is None or not self.scheduler.trigger_now(name):
            self._reply(404, {"error": "repository not configured"})
            return
        log.info("push webhook: re-ingesting %s now", name)
        self._reply(202, {"scheduled": name})

    def _reply(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
