"""Optional enrichment: pull-request titles and descriptions from GitHub's REST API.

With `GITHUB_TOKEN` set and a repository hosted on GitHub, each ingest asks
`GET /repos/{owner}/{repo}/pulls/{n}` for the PR numbers its new commits name that the
state store has not cached yet, at most `MAX_PER_INGEST` of them, newest first. It is
never required: a refusal, a rate limit (403 or 429 with `X-RateLimit-Remaining: 0`,
`X-RateLimit-Reset` or `Retry-After`), a timeout or an unreachable host ends the
enrichment for this ingest with one log line and the rest waits for the next one. A 404
is cached too, so a number that is an issue is not asked again. The token travels in a
header only and is never logged; descriptions are scrubbed of secrets like code.
`CODECITE_GITHUB_API_URL` points it elsewhere (GitHub Enterprise, or a test's fake).
"""

from __future__ import annotations

import json
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from bot.errors import BotError
from bot.ingest.secrets import scrub
from bot.store.base import HistoryRecords
from bot.store.history_records import PullRequest

log = logging.getLogger(__name__)

MAX_PER_INGEST = 100
TIMEOUT = 10.0
BODY_CHARS = 4000
MISSING = "missing"  # the state cached for a number GitHub has no pull request for


@dataclass(frozen=True, slots=True)
class Enriched:
    fetched: int = 0
    stopped: str = ""  # why it stopped early ("" when every wanted number was asked)


def github_slug(web_url: str) -> str:
    """`owner/name` of a github.com repository's web URL, else ""."""
    parts = urlsplit(web_url)
    if (parts.hostname or "").lower() not in ("github.com", "www.github.com"):
        return ""
    path = parts.path.strip("/").removesuffix(".git").split("/")
    return "/".join(path[:2]) if len(path) >= 2 and all(path[:2]) else ""


def enrich(
    store: HistoryRecords,
    repo: str,
    slug: str,
    numbers: Iterable[int],
    *,
    token: str,
    api_url: str,
) -> Enriched:
    """Fetch and cache the pull requests among `numbers` not cached yet (newest first)."""
    wanted = sorted(set(numbers), reverse=True)
    if not (slug and token and wanted):
        return Enriched()
    known = store.pull_requests(repo, wanted)
    todo = [n for n in wanted if n not in known][:MAX_PER_INGEST]
    found: list[PullRequest] = []
    stopped = ""
    for number in todo:
        try:
            found.append(_fetch(api_url, slug, number, token))
        except _Stop as stop:
            stopped = stop.reason
            log.warning("pull request titles of %s: %s", repo, stop.reason)
            break
    if found:
        store.put_pull_requests(repo, found)
    return Enriched(len(found), stopped)


class _Stop(Exception):
    def __init__(self, reason: str) -> None:
        self.reason = reason


def _fetch(api_url: str, slug: str, number: int, token: str) -> PullRequest:
    url = f"{api_url.rstrip('/')}/repos/{quote(slug, safe='/')}/pulls/{number}"
    request = urllib.request.Request(  # noqa: S310 - the configured API base (https by default)
        url,
        headers={
            "Accept": "application/vnd.github+json",
            "Authorization": f"Bearer {token}",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": "codecite",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:  # noqa: S310
            data = json.loads(response.read(1 << 20).decode("utf-8", "replace"))
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return PullRequest(number, "", state=MISSING)
        raise _Stop(_refusal(exc)) from None
    except (urllib.error.URLError, TimeoutError, OSError, ValueError) as exc:
        raise _Stop(f"GitHub could not be reached ({type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise _Stop("GitHub answered with something other than a pull request")
    body = str(data.get("body") or "")[:BODY_CHARS]
    return PullRequest(
        number=number,
        title=scrub(str(data.get("title") or ""), "").text[:300],
        body=scrub(body, "").text,
        url=str(data.get("html_url") or ""),
        state=str(data.get("state") or ""),
    )


def _refusal(exc: urllib.error.HTTPError) -> str:
    headers = exc.headers
    if exc.code in (403, 429):
        retry = headers.get("Retry-After") if headers else None
        reset = headers.get("X-RateLimit-Reset") if headers else None
        remaining = headers.get("X-RateLimit-Remaining") if headers else None
        if retry:
            return f"rate-limited by GitHub; retry after {retry} s"
        if remaining == "0" and reset and reset.isdigit():
            wait = max(0, int(reset) - int(time.time()))
            return f"GitHub's rate limit is used up; it resets in {wait} s"
        return f"GitHub refused the request ({exc.code}); check GITHUB_TOKEN"
    if exc.code == 401:
        return "GitHub did not accept GITHUB_TOKEN (401)"
    return f"GitHub answered {exc.code}"


def enrich_quietly(
    store: HistoryRecords, repo: str, web_url: str, numbers: Iterable[int], token: str, api: str
) -> Enriched:
    """`enrich`, whose store failures are logged, never raised (it is only enrichment)."""
    try:
        return enrich(store, repo, github_slug(web_url), numbers, token=token, api_url=api)
    except BotError as exc:
        log.warning("pull request titles of %s not stored: %s", repo, exc.user_message)
        return Enriched(stopped=exc.user_message)
