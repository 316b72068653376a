"""Which commit would an ingest index now? Asked cheaply: no clone, no fetch.

A remote is asked with `git ls-remote` (one round trip); a local repository
with `rev-parse`. Plain directories have no commit to compare: None, so the
caller lists them (which is cheap for local files anyway).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from bot.ingest.clone import transport_args
from bot.ingest.git import Git, base_env, trusting
from bot.ingest.hosting import auth_env, is_url, parse_remote


def current_commit(location: str, branch: str | None, token: str | None) -> str | None:
    text = location.strip()
    local = Path(text).expanduser()
    if not is_url(text) or local.exists():
        return _local_commit(local.resolve(), branch)
    remote = parse_remote(text)
    extra, secrets = auth_env(remote, token)
    ref = f"refs/heads/{branch}" if branch else "HEAD"
    with tempfile.TemporaryDirectory(prefix="codecite-probe-") as scratch:
        git = Git(Path(scratch), base_env(extra), secrets)
        args = ("ls-remote", *transport_args(remote.url), "--", remote.url, ref)
        listing = git.try_text(*args, transfer=True)
    if not listing:
        return None
    sha, _, name = listing.splitlines()[0].partition("\t")
    return sha if name == ref else None


def _local_commit(root: Path, branch: str | None) -> str | None:
    try:
        if not root.is_dir():
            return None
    except PermissionError:  # cannot tell: the ingest that follows says which path refused
        return None
    git = Git(root, base_env({"GIT_CEILING_DIRECTORIES": str(root.parent), **trusting(root)}))
    if git.try_text("rev-parse", "--is-inside-work-tree") != "true" and (
        git.try_text("rev-parse", "--is-bare-repository") != "true"
    ):
        return None
    return git.try_text("rev-parse", "--verify", "--quiet", f"{branch or 'HEAD'}^{{commit}}")
