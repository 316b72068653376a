"""Blobless clones kept in sync with their remote, and git's failures in one sentence."""

from __future__ import annotations

import logging
import os
import re
import shutil
from pathlib import Path

from bot.errors import SourceError
from bot.ingest.git import Git, GitError, base_env, first_line
from bot.ingest.hosting import RemoteURL, auth_env
from bot.runtime.retry import Retrier, Retry, RetryPolicy

log = logging.getLogger(__name__)

_MISSING_REF = re.compile(r"Remote branch .* not found|couldn't find remote ref", re.IGNORECASE)
_FAILURES = (
    ("branch", _MISSING_REF),
    (
        "auth",
        re.compile(
            r"Authentication failed|could not read (?:Username|Password)|terminal prompts disabled"
            r"|Permission denied \(|returned error: 40[13]|Access denied|Host key verification",
            re.IGNORECASE,
        ),
    ),
    (
        "missing",
        re.compile(
            r"Repository not found|does not appear to be a git repository|returned error: 404"
            r"|No such file or directory|not found",
            re.IGNORECASE,
        ),
    ),
    (
        "unreachable",
        re.compile(
            r"Could not resolve|Connection refused|Failed to connect|unreachable|timed out"
            r"|Connection reset|Could not read from remote|unable to access|Connection closed",
            re.IGNORECASE,
        ),
    ),
)


def transport_args(url: str) -> tuple[str, ...]:
    """Options for every clone and fetch from `url`.

    A `file://` source is served by a local upload-pack that we start, so we may
    let it honour our filter: then a source that lacks one blob still clones,
    and that blob alone is reported missing.
    """
    if url.startswith("file://"):
        return ("--upload-pack=git -c uploadpack.allowFilter=true upload-pack",)
    return ()


def sync_clone(
    remote: RemoteURL, dest: Path, branch: str | None, token: str | None
) -> tuple[Git, str, str]:
    """Clone `remote` blobless into `dest`, or fetch into the clone there.

    Returns a runner for the clone (it keeps the credentials, for the blobs
    fetched later by `trees.fetch_blobs`), the commit and the branch.

    Nothing is checked out: sources read git objects. The clone is ours: its
    branch is moved to the fetched head whatever happened upstream (force-pushes
    included). Without `branch`, the remote's default branch is used. A shallow
    source clones shallow, which is all an index of its tip needs.
    """
    extra, secrets = auth_env(remote, token)
    # Never let git discover a repository above `dest` (e.g. when home is inside one).
    extra["GIT_CEILING_DIRECTORIES"] = str(dest.parent.resolve())
    env = base_env(extra)
    dest.parent.mkdir(parents=True, exist_ok=True)
    git = Git(dest, env, secrets)

    def attempt() -> tuple[Git, str, str]:
        if (dest / ".git").is_dir() and git.try_text("rev-parse", "--verify", "-q", "HEAD"):
            return (git, *_update(git, remote, branch))
        if dest.exists():
            log.warning("replacing the unusable clone at %s", dest)
        return (git, *_clone(remote, dest, branch, git))

    return NETWORK_RETRY.call(attempt, _transient, what=f"git fetch of {remote.url}")


# A host that did not answer may answer a moment later; a refusal or a missing branch will not.
NETWORK_RETRY = Retrier(RetryPolicy(max_attempts=3, base_delay=1.0, max_delay=8.0))


def _transient(exc: BaseException) -> Retry | None:
    """Retry only when the host did not answer (auth failures and missing refs are final)."""
    if isinstance(exc, GitError) and _failure_kind(exc.stderr) == "unreachable":
        return Retry()
    return None


def _failure_kind(stderr: str) -> str:
    return next((k for k, rx in _FAILURES if rx.search(stderr)), "")


def _clone(remote: RemoteURL, dest: Path, branch: str | None, git: Git) -> tuple[str, str]:
    partial = dest.with_name(f".{dest.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    args = ["clone", "--progress", "--filter=blob:none", "--no-checkout", "--single-branch"]
    args += ["--no-tags", *transport_args(remote.url)]
    if branch:
        args += ["--branch", branch]
    log.info("cloning %s into %s", remote.url, dest)
    try:
        Git(dest.parent, git.env, git.secrets).run(
            *args, "--", remote.url, str(partial), transfer=True
        )
        fresh = Git(partial, git.env, git.secrets)
        commit = fresh.try_text("rev-parse", "--verify", "-q", "HEAD^{commit}")
        current = branch or fresh.try_text("symbolic-ref", "--quiet", "--short", "HEAD") or ""
        if commit and fresh.try_text("rev-parse", "--is-shallow-repository") == "true":
            log.info("%s is a shallow repository: its tip is indexed, not its history", remote.url)
    except GitError as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise _network_error(exc, remote, branch) from None
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    if not commit:
        shutil.rmtree(partial, ignore_errors=True)
        raise SourceError(f"The repository {remote.url} has no commits yet.")
    shutil.rmtree(dest, ignore_errors=True)
    partial.rename(dest)
    return commit, current


def _update(git: Git, remote: RemoteURL, branch: str | None) -> tuple[str, str]:
    if git.try_text("config", "--get", "remote.origin.url") != remote.url:
        git.run("remote", "set-url", "origin", remote.url)
    want = branch or git.try_text("symbolic-ref", "--quiet", "--short", "HEAD") or ""
    try:
        want = want or _remote_head(git, remote)
        try:
            _fetch(git, remote, want)
        except GitError as exc:
            if branch or not _MISSING_REF.search(exc.stderr):
                raise
            want = _remote_head(git, remote)  # the default branch was renamed upstream
            _fetch(git, remote, want)
        commit = git.text("rev-parse", "--verify", f"refs/remotes/origin/{want}^{{commit}}")
        # No checkout: the branch and HEAD move; blobs are fetched when listed.
        git.run("update-ref", "--no-deref", f"refs/heads/{want}", commit)
        git.run("symbolic-ref", "HEAD", f"refs/heads/{want}")
    except GitError as exc:
        raise _network_error(exc, remote, branch or want) from None
    return commit, want


def _fetch(git: Git, remote: RemoteURL, branch: str) -> None:
    refspec = f"+refs/heads/{branch}:refs/remotes/origin/{branch}"
    args = ("fetch", "--progress", "--no-tags", *transport_args(remote.url))
    git.run(*args, "origin", refspec, transfer=True)


def _remote_head(git: Git, remote: RemoteURL) -> str:
    args = ("ls-remote", *transport_args(remote.url), "--symref", "origin", "HEAD")
    listing = git.text(*args, transfer=True)
    for line in listing.splitlines():
        if line.startswith("ref: refs/heads/") and line.endswith("\tHEAD"):
            return line[len("ref: refs/heads/") : -len("\tHEAD")]
    raise GitError("The remote does not say which branch is its default; set a branch.")


def _network_error(exc: GitError, remote: RemoteURL, branch: str | None) -> GitError:
    """Translate git's stderr into one sentence naming the problem (never a secret)."""
    url = remote.url
    kind = _failure_kind(exc.stderr)
    messages = {
        "branch": f"Branch {branch!r} was not found in {url}.",
        "auth": f"Access to {url} was denied; check GITHUB_TOKEN or the repository credentials.",
        "missing": f"No git repository was found at {url} (or it is private).",
        "unreachable": f"Could not reach {remote.host or url}.",
    }
    # Errors without stderr (timeouts, our own checks) already say what happened.
    default = f"git could not fetch {url}." if exc.stderr else exc.user_message
    message = messages.get(kind, default)
    # Detail for the log: whoever catches the error reports it (a retry may yet succeed).
    log.info("%s (%s)", message, first_line(exc.stderr))
    return GitError(message, stderr=exc.stderr)


FETCH_BATCH = 20_000  # blob ids a fetch asks for at once
FETCH_FAILURES = 64  # refused fetches tolerated while setting aside blobs the remote lacks
_FINAL = ("auth", "unreachable")
_NOT_OUR_REF = re.compile(r"not our ref ([0-9a-f]{40}(?:[0-9a-f]{24})?)")


def fetch_blobs(git: Git, oids: list[str], remote: RemoteURL) -> None:
    """Fetch these blobs from origin into the clone, in batches.

    A remote that lacks one of them refuses the whole request. When it names
    the blob (`not our ref <oid>`), that blob is set aside and the rest asked
    again; otherwise the batch is halved until the blobs it cannot serve are
    isolated. Those stay missing and the caller reports them. An unreachable
    host or a refusal of access ends it at once.
    """
    # No "have" lines: the remote would take our commit to mean we hold its blobs.
    args: tuple[str, ...] = ("-c", "fetch.negotiationAlgorithm=noop", "fetch", "--progress")
    args += ("--no-tags", "--no-write-fetch-head")
    args += ("--recurse-submodules=no", "--filter=blob:none", *transport_args(remote.url))
    queue = [oids[i : i + FETCH_BATCH] for i in range(0, len(oids), FETCH_BATCH)]
    failures = 0
    while queue:
        part = queue.pop()
        request = "".join(f"{oid}\n" for oid in part).encode("ascii")
        try:
            git.run(*args, "--stdin", "origin", input=request, transfer=True)
        except GitError as exc:
            named = _NOT_OUR_REF.search(exc.stderr)
            if not named and (not exc.stderr or _failure_kind(exc.stderr) in _FINAL):
                raise _network_error(exc, remote, None) from None
            failures += 1
            if failures > FETCH_FAILURES or len(part) == 1:
                log.warning("%d blob(s) could not be fetched from %s", len(part), remote.url)
                continue
            lacking = named.group(1) if named else ""
            if lacking in part:
                log.warning("%s does not have blob %s", remote.url, lacking[:12])
                queue.append([oid for oid in part if oid != lacking])
            else:
                queue += [part[: len(part) // 2], part[len(part) // 2 :]]
