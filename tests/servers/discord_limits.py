"""Discord's per-route rate limits for the fake API: buckets, headers and 429s.

Discord counts requests per route and per top-level resource (a channel, or a
webhook id and token) in windows, says where a bucket stands on every answer
(`X-RateLimit-Limit`, `-Remaining`, `-Reset` as epoch seconds, `-Reset-After`
in seconds, `-Bucket`, a hash naming the shared limit) and answers a request
over the limit with 429: a JSON body `{message, retry_after, global}` and
`Retry-After`, `X-RateLimit-Scope` and the `Via` of its proxy (discord.py takes
a 429 without `Via` for a Cloudflare ban). The rules below are the documented
behaviour roughly (the real numbers are not published and may change): five
message sends or five edits per channel in five seconds, five interaction
webhook calls per token in two seconds.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from aiohttp import web


@dataclass(frozen=True)
class Rule:
    """`limit` requests per `period` seconds for each value of the major parameter (group 1)."""

    bucket: str  # the hash Discord would send in X-RateLimit-Bucket
    method: str
    pattern: re.Pattern[str]
    limit: int
    period: float


def rule(bucket: str, method: str, pattern: str, limit: int, period: float) -> Rule:
    return Rule(bucket, method, re.compile(pattern), limit, period)


DEFAULT_RULES = (
    rule("a1b2c3d4message-create", "POST", r"/channels/(\d+)/messages", 5, 5.0),
    rule("e5f6a7b8message-edit", "PATCH", r"/channels/(\d+)/messages/\d+", 5, 5.0),
    rule("c9d0e1f2message-delete", "DELETE", r"/channels/(\d+)/messages/\d+", 5, 5.0),
    rule("0a1b2c3dwebhook", "*", r"/webhooks/(\d+/[^/]+)(?:/messages/[^/]+)?", 5, 2.0),
)


@dataclass
class _Window:
    remaining: int
    resets_at: float  # monotonic


@dataclass(frozen=True)
class Verdict:
    """Where the bucket stands after a request: its headers, and whether it was refused."""

    headers: dict[str, str]
    refused: bool
    retry_after: float = 0.0


class RateLimits:
    """Fixed windows per (rule, major parameter); `exceeded` lists every refusal."""

    def __init__(
        self,
        rules: tuple[Rule, ...] = DEFAULT_RULES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rules = rules
        self._clock = clock
        self._windows: dict[tuple[str, str], _Window] = {}
        self.exceeded: list[tuple[str, str]] = []  # (method, path) of each 429

    def take(self, method: str, path: str) -> Verdict | None:
        """Count one request; None when no rule covers the route."""
        found = next(
            (
                (r, m)
                for r in self.rules
                if r.method in ("*", method) and (m := r.pattern.fullmatch(path)) is not None
            ),
            None,
        )
        if found is None:
            return None
        limit_rule, match = found
        now = self._clock()
        key = (limit_rule.bucket, match.group(1))
        window = self._windows.get(key)
        if window is None or now >= window.resets_at:
            window = self._windows[key] = _Window(limit_rule.limit, now + limit_rule.period)
        reset_after = max(0.0, window.resets_at - now)
        refused = window.remaining <= 0
        if not refused:
            window.remaining -= 1
        else:
            self.exceeded.append((method, path))
        headers = {
            "X-RateLimit-Limit": str(limit_rule.limit),
            "X-RateLimit-Remaining": str(window.remaining),
            "X-RateLimit-Reset": f"{time.time() + reset_after:.3f}",
            "X-RateLimit-Reset-After": f"{reset_after:.3f}",
            "X-RateLimit-Bucket": limit_rule.bucket,
        }
        return Verdict(headers, refused, reset_after)


def too_many(verdict: Verdict) -> web.Response:
    """The 429 Discord sends for a per-route limit."""
    headers = {
        "Content-Type": "application/json",
        **verdict.headers,
        "Retry-After": str(math.ceil(verdict.retry_after)),
        "X-RateLimit-Scope": "user",
        "Via": "1.1 google",
    }
    payload = {
        "message": "You are being rate limited.",
        "retry_after": round(verdict.retry_after, 3),
        "global": False,
    }
    return web.Response(status=429, body=json.dumps(payload).encode(), headers=headers)
