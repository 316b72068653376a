"""Links to cited lines at the indexed commit: GitHub, GitLab and Bitbucket forms."""

from __future__ import annotations

from urllib.parse import quote, urlsplit

from bot.models import RepoState
from bot.retrieval.retriever import Source


def permalink(web_url: str, commit: str, path: str, start: int, end: int) -> str:
    """A link to lines `start..end` of `path` at `commit`; "" when either is unknown."""
    if not web_url or not commit:
        return ""
    web = web_url.rstrip("/")
    start = max(1, start)
    end = max(start, end)
    quoted = quote(path.lstrip("/"), safe="/")
    host = (urlsplit(web).hostname or "").lower()
    if host == "bitbucket.org":
        lines = f"{start}" if start == end else f"{start}:{end}"
        return f"{web}/src/{commit}/{quoted}#lines-{lines}"
    if "gitlab" in host.split("."):
        lines = f"L{start}" if start == end else f"L{start}-{end}"
        return f"{web}/-/blob/{commit}/{quoted}#{lines}"
    lines = f"L{start}" if start == end else f"L{start}-L{end}"
    return f"{web}/blob/{commit}/{quoted}#{lines}"


class Permalinker:
    """Links a source at its repository's indexed commit ("" for local repositories)."""

    def __init__(self, states: dict[str, RepoState]) -> None:
        self._states = states

    def __call__(self, source: Source) -> str:
        state = self._states.get(source.repo)
        if state is None:
            return ""
        return permalink(
            state.web_url, state.commit, source.path, source.start_line, source.end_line
        )


def commit_link(web_url: str, sha: str) -> str:
    """The commit's page on its host; "" when the repository has no web address."""
    return _page(web_url, sha, ("commits", "-/commit", "commit"))


def pull_request_link(web_url: str, number: int | None) -> str:
    """The pull (merge) request's page, built from the remote URL alone (no API call)."""
    return _page(web_url, str(number or ""), ("pull-requests", "-/merge_requests", "pull"))


def _page(web_url: str, what: str, kinds: tuple[str, str, str]) -> str:
    """`web_url/<kind>/<what>`, the kind by host: Bitbucket, GitLab, else GitHub's form."""
    if not web_url or not what:
        return ""
    web = web_url.rstrip("/")
    host = (urlsplit(web).hostname or "").lower()
    bitbucket, gitlab, github = kinds
    if host == "bitbucket.org":
        return f"{web}/{bitbucket}/{what}"
    if "gitlab" in host.split("."):
        return f"{web}/{gitlab}/{what}"
    return f"{web}/{github}/{what}"
