"""A thin, safe runner for the git CLI, and a streaming blob reader.

Every call has a timeout, runs without a terminal (so git and ssh can never
prompt), in English (so failures can be classified), and scrubs the secrets
it was given from anything it reports. Credentials travel through
`GIT_CONFIG_*` environment variables, never argv or a URL.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import select
import shutil
import signal
import subprocess
import tempfile
import time
import weakref
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from bot.errors import SourceError
from bot.ingest.hosting import RemoteURL, auth_env, redact
from bot.retry import Retrier, Retry, RetryPolicy

log = logging.getLogger(__name__)

LOCAL_TIMEOUT = 120.0  # reading a local repository
NETWORK_TIMEOUT = 900.0  # clone or fetch of a large repository
OBJECT_TIMEOUT = 120.0  # one object from cat-file (may be fetched lazily)
_WINDOW = 32  # cat-file requests in flight; 32 x 65 bytes stays under a 4 KB pipe buffer
_OID = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")
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


class GitError(SourceError):
    """A git command failed. `stderr` is already scrubbed of secrets and userinfo."""

    user_message = "A git command failed."

    def __init__(self, user_message: str | None = None, *, stderr: str = "") -> None:
        super().__init__(user_message, detail=_first_line(stderr))
        self.stderr = stderr


def _first_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    fatal = [ln for ln in lines if ln.startswith(("fatal:", "error:"))]
    return (fatal or lines or [""])[0][:300]


def base_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for every git call: no prompts, English messages."""
    env = dict(os.environ)
    env.update(
        LC_ALL="C",
        LANGUAGE="C",
        GIT_TERMINAL_PROMPT="0",
        GCM_INTERACTIVE="never",
        SSH_ASKPASS_REQUIRE="never",
    )
    env.update(extra or {})
    return env


@dataclass(frozen=True, slots=True)
class Git:
    """Runs git in `cwd` with `env` (already complete) and scrubs `secrets` from errors."""

    cwd: Path
    env: Mapping[str, str] = field(default_factory=base_env)
    secrets: tuple[str, ...] = ()

    def run(self, *args: str, timeout: float = LOCAL_TIMEOUT, check: bool = True) -> bytes:
        """stdout of `git args...`; GitError (with scrubbed stderr) on failure or timeout."""
        code, out, err = self._call(args, timeout)
        if check and code != 0:
            raise GitError(f"git {args[0]} failed.", stderr=err)
        return out

    def text(self, *args: str, timeout: float = LOCAL_TIMEOUT) -> str:
        return self.run(*args, timeout=timeout).decode("utf-8", "replace").strip()

    def try_text(self, *args: str, timeout: float = LOCAL_TIMEOUT) -> str | None:
        """stdout, or None when git exits non-zero (e.g. a ref that does not exist)."""
        code, out, _ = self._call(args, timeout)
        return out.decode("utf-8", "replace").strip() if code == 0 else None

    def blobs(self) -> BlobReader:
        return BlobReader(self)

    def _call(self, args: Sequence[str], timeout: float) -> tuple[int, bytes, str]:
        argv = ["git", *args]
        try:
            proc = subprocess.Popen(
                argv,
                cwd=self.cwd,
                env=dict(self.env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # no controlling terminal: ssh and git cannot prompt
            )
        except FileNotFoundError as exc:
            raise SourceError("git is not installed on the server.") from exc
        except OSError as exc:
            raise SourceError(f"git could not be started ({exc.strerror}).") from exc
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            proc.communicate()
            log.warning("git %s timed out after %.0f s in %s", args[0], timeout, self.cwd)
            raise GitError(f"git {args[0]} timed out after {timeout:.0f} s.") from None
        stderr = redact(err.decode("utf-8", "replace"), self.secrets)
        if proc.returncode != 0:
            log.debug("git %s exited %d: %s", args[0], proc.returncode, stderr.strip())
        return proc.returncode, out, stderr


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill git and its helpers (remote-https, ssh), which may hold our pipes open."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


class BlobReader:
    """Object contents from one long-lived `git cat-file --batch` process.

    `read_many` keeps a small window of requests in flight so git inflates the
    next object while we consume this one. Not thread-safe: one reader per thread.
    """

    def __init__(self, git: Git, *, timeout: float = OBJECT_TIMEOUT) -> None:
        self._git = git
        self._timeout = timeout
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._buf = bytearray()
        self._pos = 0
        self._finalizer: weakref.finalize[..., BlobReader] | None = None

    def __enter__(self) -> BlobReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def read(self, oid: str) -> bytes:
        return next(self.read_many([oid]))[1]

    def read_many(self, oids: Iterable[str]) -> Iterator[tuple[str, bytes]]:
        """(oid, content) in request order; SourceError if an object is missing."""
        proc = self._start()
        pending: deque[str] = deque()
        todo = iter(oids)
        more = True
        try:
            while True:
                batch: list[str] = []
                while more and len(pending) + len(batch) < _WINDOW:
                    oid = next(todo, None)
                    if oid is None:
                        more = False
                    else:
                        batch.append(_checked_oid(oid))
                if batch:
                    self._send(proc, batch)
                    pending.extend(batch)
                if not pending:
                    return
                oid = pending.popleft()
                yield oid, self._receive(oid)
        finally:
            if pending:  # abandoned mid-stream: replies left in the pipe, start afresh
                self.close()

    def close(self) -> None:
        if self._finalizer is not None:
            self._finalizer()
        self._proc, self._stderr, self._finalizer = None, None, None
        self._buf.clear()
        self._pos = 0

    def _start(self) -> subprocess.Popen[bytes]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        self.close()
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the process
        try:
            proc = subprocess.Popen(
                ["git", "cat-file", "--batch"],
                cwd=self._git.cwd,
                env=dict(self._git.env),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                bufsize=0,
                start_new_session=True,
            )
        except OSError as exc:
            self._stderr.close()
            raise SourceError("git cat-file could not be started.") from exc
        self._proc = proc
        self._finalizer = weakref.finalize(self, _stop, proc, self._stderr)
        return proc

    def _send(self, proc: subprocess.Popen[bytes], oids: list[str]) -> None:
        assert proc.stdin is not None
        data = memoryview("".join(f"{o}\n" for o in oids).encode("ascii"))
        try:
            while data:
                data = data[os.write(proc.stdin.fileno(), data) :]
        except OSError as exc:
            self.close()
            raise SourceError("git cat-file stopped unexpectedly.") from exc

    def _receive(self, oid: str) -> bytes:
        deadline = time.monotonic() + self._timeout
        header = self._line(deadline).decode("ascii", "replace").split()
        if len(header) != 3 or header[0] != oid:
            self.close()
            state = header[-1] if header else "unreadable"
            raise SourceError(f"Object {oid[:12]} is {state} in the repository.")
        data = self._exact(int(header[2]) + 1, deadline)
        return data[:-1]  # each object is followed by a newline

    def _line(self, deadline: float) -> bytes:
        while (end := self._buf.find(b"\n", self._pos)) < 0:
            self._fill(deadline)
        line = bytes(self._buf[self._pos : end])
        self._pos = end + 1
        return line

    def _exact(self, size: int, deadline: float) -> bytes:
        while len(self._buf) - self._pos < size:
            self._fill(deadline)
        data = bytes(self._buf[self._pos : self._pos + size])
        self._pos += size
        if self._pos == len(self._buf) or self._pos > (8 << 20):
            del self._buf[: self._pos]
            self._pos = 0
        return data

    def _fill(self, deadline: float) -> None:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        fd = proc.stdout.fileno()
        wait = deadline - time.monotonic()
        ready = select.select([fd], [], [], max(0.0, wait))[0] if wait > 0 else []
        if not ready:
            self.close()
            raise SourceError(f"Reading from git timed out after {self._timeout:.0f} s.")
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            err = self._stderr_text()
            self.close()
            raise GitError("git cat-file stopped unexpectedly.", stderr=err)
        self._buf += chunk

    def _stderr_text(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        return redact(self._stderr.read(4096).decode("utf-8", "replace"), self._git.secrets)


def _checked_oid(oid: str) -> str:
    if not _OID.match(oid):
        raise SourceError(f"{oid[:20]!r} is not an object id.")
    return oid


def _stop(proc: subprocess.Popen[bytes], stderr: IO[bytes]) -> None:
    """Close stdin so cat-file exits; kill it if it does not."""
    if proc.stdin is not None:
        with contextlib.suppress(OSError):
            proc.stdin.close()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()
    stderr.close()


def sync_clone(
    remote: RemoteURL, dest: Path, branch: str | None, token: str | None
) -> tuple[Git, str, str]:
    """Clone `remote` blobless into `dest`, or fetch into the clone there.

    Returns a runner for the clone (it keeps the credentials, should git need
    to fetch a missing object later), the commit and the branch.

    The clone is ours: its branch is moved to the fetched head whatever happened
    upstream (force-pushes included). Without `branch`, the remote's default
    branch is used (the branch checked out by the first clone).
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
    args = ["clone", "--quiet", "--filter=blob:none", "--single-branch", "--no-tags"]
    if branch:
        args += ["--branch", branch]
    log.info("cloning %s into %s", remote.url, dest)
    try:
        Git(dest.parent, git.env, git.secrets).run(
            *args, "--", remote.url, str(partial), timeout=NETWORK_TIMEOUT
        )
        fresh = Git(partial, git.env, git.secrets)
        commit = fresh.try_text("rev-parse", "--verify", "-q", "HEAD^{commit}")
        current = branch or fresh.try_text("symbolic-ref", "--quiet", "--short", "HEAD") or ""
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
        want = want or _remote_head(git)
        try:
            _fetch(git, want)
        except GitError as exc:
            if branch or not _MISSING_REF.search(exc.stderr):
                raise
            want = _remote_head(git)  # the default branch was renamed upstream
            _fetch(git, want)
        commit = git.text("rev-parse", "--verify", f"refs/remotes/origin/{want}^{{commit}}")
        # Checking out fetches the commit's missing blobs in one batch (blobless clone).
        git.run("checkout", "--quiet", "--force", "-B", want, commit, timeout=NETWORK_TIMEOUT)
    except GitError as exc:
        raise _network_error(exc, remote, branch or want) from None
    return commit, want


def _fetch(git: Git, branch: str) -> None:
    refspec = f"+refs/heads/{branch}:refs/remotes/origin/{branch}"
    git.run("fetch", "--quiet", "--no-tags", "origin", refspec, timeout=NETWORK_TIMEOUT)


def _remote_head(git: Git) -> str:
    listing = git.text("ls-remote", "--symref", "origin", "HEAD", timeout=NETWORK_TIMEOUT)
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
    log.warning("%s (%s)", message, _first_line(exc.stderr))
    return GitError(message, stderr=exc.stderr)
