"""Repository sources: what files a repository has at one commit, and their text.

`open_source` accepts a git URL (cloned blobless into `home/repos/<name>` and
fetched on later opens), a local git repository (read from the commit's
objects, never the working tree) or a plain directory (walked). Each source
lists the files worth indexing, sorted by path, counting every skip by reason.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from pathlib import Path

from bot.errors import SourceError
from bot.ingest import filters
from bot.ingest.access import check_listable, first_denied, unreadable
from bot.ingest.clone import sync_clone
from bot.ingest.directory_source import DirectorySource
from bot.ingest.git import Git, base_env, trusting
from bot.ingest.git_source import GitSource
from bot.ingest.hosting import is_url, parse_remote, redact, web_url_for
from bot.ingest.source_base import Checkout, Source, SourceFile, SourceOptions, git_blob_sha

__all__ = ["Checkout", "Source", "SourceFile", "default_name", "git_blob_sha", "open_source"]

log = logging.getLogger(__name__)

_NAME = re.compile(r"[^A-Za-z0-9._-]+")
_BRANCH = re.compile(r"^(?!-)(?!.*\.\.)(?!.*@\{)[A-Za-z0-9._/@+-]+(?<![./])$")


def default_name(location: str) -> str:
    """`https://github.com/psf/requests.git` -> `requests`; a path -> its directory name."""
    text = location.strip().rstrip("/")
    if is_url(text):
        tail = re.split(r"[/:]", text)[-1]
    else:
        tail = Path(text).expanduser().resolve().name if text else ""
    tail = _NAME.sub("-", tail.removesuffix(".git")).strip("-.")
    return tail or "repo"


def open_source(
    location: str,
    *,
    home: Path,
    name: str | None = None,
    branch: str | None = None,
    token: str | None = None,
    max_file_bytes: int = 1_000_000,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> Source:
    """Open a repository for listing and reading; SourceError with a reason if it cannot be."""
    name = _checked_name(name if name is not None else default_name(location))
    if branch is not None and branch != "" and not _BRANCH.match(branch):
        raise SourceError(f"{branch!r} is not a valid branch name.")
    options = SourceOptions(
        max_file_bytes, filters.PathPatterns(include), filters.PathPatterns(exclude)
    )
    text = location.strip()
    if not text:
        raise SourceError("No repository location was given.")
    local = Path(text).expanduser()
    if not is_url(text) or local.exists():
        return _open_local(local.resolve(), name, branch or None, options)
    remote = parse_remote(text)
    dest = home / "repos" / name
    git, commit, resolved = sync_clone(remote, dest, branch or None, token)
    checkout = Checkout(name, dest, commit, resolved, remote.url, web_url_for(remote.url))
    log.info("opened %s at %s@%s", checkout.source, resolved, commit[:12])
    return GitSource(checkout, git, options, remote)


def _checked_name(name: str) -> str:
    if not name or name in (".", "..") or any(c in name for c in "/\\\0#") or name.strip() != name:
        raise SourceError(f"{redact(name)!r} is not a usable repository name.")
    return name


def _open_local(root: Path, name: str, branch: str | None, options: SourceOptions) -> Source:
    try:
        return _open_readable(root, name, branch, options)
    except PermissionError as exc:  # a directory on the way that this user may not enter
        raise unreadable(first_denied([Path(exc.filename or root)]) or root) from exc


def _open_readable(root: Path, name: str, branch: str | None, options: SourceOptions) -> Source:
    if not root.exists():
        raise SourceError(f"{root} does not exist and is not a git URL.")
    if not root.is_dir():
        raise SourceError(f"{root} is not a directory.")
    if _is_git_repo(root):
        return _open_local_git(root, name, branch, options)
    if branch:
        raise SourceError(f"{root} is not a git repository, so branch {branch!r} cannot be used.")
    check_listable(root)
    checkout = Checkout(name, root, "", "", str(root), "")
    return DirectorySource(checkout, options)


def _is_git_repo(root: Path) -> bool:
    if (root / ".git").exists():
        return True
    if not ((root / "HEAD").is_file() and (root / "objects").is_dir()):
        return False
    return (
        Git(root, base_env(trusting(root))).try_text("rev-parse", "--is-bare-repository") == "true"
    )


def _open_local_git(root: Path, name: str, branch: str | None, options: SourceOptions) -> Source:
    git = Git(root, base_env(trusting(root)))
    commit = git.try_text("rev-parse", "--verify", "--quiet", f"{branch or 'HEAD'}^{{commit}}")
    if not commit:
        git_dir = root / ".git" if (root / ".git").is_dir() else root
        denied = first_denied([git_dir, *(git_dir / part for part in ("HEAD", "refs", "objects"))])
        if denied is not None:
            raise unreadable(denied)
        if branch:
            raise SourceError(f"Branch {branch!r} was not found in {root}.")
        raise SourceError(f"The git repository {root} has no commits yet.")
    current = branch or git.try_text("symbolic-ref", "--quiet", "--short", "HEAD") or ""
    origin = git.try_text("config", "--get", "remote.origin.url") or ""
    checkout = Checkout(name, root, commit, current, str(root), web_url_for(origin))
    return GitSource(checkout, git, options)
