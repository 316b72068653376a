"""A strict local fake of the GitHub REST API's pull-request endpoint.

    with FakeGitHub(token="ghs_test") as gh:
        gh.pulls[("demo", "shop", 12)] = {"title": "Add carts", "body": "..."}
        ... CODECITE_GITHUB_API_URL=gh.base_url ...

Serves `GET /repos/{owner}/{repo}/pulls/{number}` as GitHub does: JSON with `number`,
`title`, `body`, `state`, `html_url`; 404 `{"message": "Not Found"}` for an unknown
number or path; 401 without `Authorization: Bearer|token <token>` (or with another token);
405 for any other method. Every answer carries the rate-limit headers
(`X-RateLimit-Limit/Remaining/Used/Reset/Resource`); when `remaining` reaches 0 the next
request gets 403 "API rate limit exceeded", and `secondary_limit_next(n, retry_after)`
answers the next n with 429 and `Retry-After`. `requests` records (method, path, headers).
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_PULL = re.compile(r"^/repos/([\w.-]+)/([\w.-]+)/pulls/(\d+)$")


class FakeGitHub:
    def __init__(self, *, token: str, limit: int = 60) -> None:
        self.token = token
        self.limit = limit
        self.remaining = limit
        self.reset = int(time.time()) + 3600
        self.pulls: dict[tuple[str, str, int], dict[str, Any]] = {}
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self._secondary: list[int] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def secondary_limit_next(self, count: int, retry_after: int = 30) -> None:
        self._secondary += [retry_after] * count

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeGitHub:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                fake._get(self)

            def do_POST(self) -> None:
                fake._answer(self, 405, {"message": "Method Not Allowed"})

            def log_message(self, *args: Any) -> None:
                """Quiet."""

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    def _get(self, handler: BaseHTTPRequestHandler) -> None:
        headers = {k.lower(): v for k, v in handler.headers.items()}
        with self._lock:
            self.requests.append(("GET", handler.path, headers))
            auth = headers.get("authorization", "")
            if auth not in (f"Bearer {self.token}", f"token {self.token}"):
                self._answer(handler, 401, {"message": "Bad credentials"})
                return
            if self._secondary:
                retry = self._secondary.pop(0)
                body = {"message": "You have exceeded a secondary rate limit."}
                self._answer(handler, 429, body, {"Retry-After": str(retry)})
                return
            if self.remaining <= 0:
                self._answer(handler, 403, {"message": "API rate limit exceeded for user."})
                return
            self.remaining -= 1
            match = _PULL.match(handler.path)
            pull = self.pulls.get((match[1], match[2], int(match[3]))) if match else None
            if match is None or pull is None:
                self._answer(handler, 404, {"message": "Not Found"})
                return
            owner, repo, number = match[1], match[2], int(match[3])
            url = f"https://github.com/{owner}/{repo}/pull/{number}"
            self._answer(
                handler, 200, {"number": number, "state": "closed", "html_url": url, **pull}
            )

    def _answer(
        self,
        handler: BaseHTTPRequestHandler,
        status: int,
        body: dict[str, Any],
        extra: dict[str, str] | None = None,
    ) -> None:
        data = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json; charset=utf-8")
        handler.send_header("Content-Length", str(len(data)))
        handler.send_header("X-RateLimit-Limit", str(self.limit))
        handler.send_header("X-RateLimit-Remaining", str(max(0, self.remaining)))
        handler.send_header("X-RateLimit-Used", str(self.limit - max(0, self.remaining)))
        handler.send_header("X-RateLimit-Reset", str(self.reset))
        handler.send_header("X-RateLimit-Resource", "core")
        for name, value in (extra or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)
