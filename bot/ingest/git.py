"""A thin, bounded runner for the git CLI, and blobless clones kept in sync.

Every call has a deadline (a short one for quick commands; for transfers a
stall limit, so a large clone may run long as long as it makes progress),
runs without a terminal (so git and ssh can never prompt), in English (so
failures can be classified), and scrubs the secrets it was given from anything
it reports. Credentials travel through `GIT_CONFIG_*` environment variables,
never argv or a URL.

Git never fetches on its own: `GIT_NO_LAZY_FETCH=1` (honoured by git 2.39,
documented from 2.44) stops a blobless clone from starting a `git fetch` for
each object it lacks, which against a shallow source recursed without end.
Blobs are fetched explicitly, in batches (`trees.fetch_blobs`). At most
`GitLimits.max_processes` git processes run at once in this process, whoever
starts them; hooks, submodule recursion and background maintenance are off.
"""

from __future__ import annotations

import contextlib
import logging
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bot.errors import SourceError
from bot.ingest.hosting import config_env, redact

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class GitLimits:
    """Bounds on every git process; `configure()` replaces them for the whole process."""

    quick_timeout: float = 120.0  # a local command (rev-parse, ls-remote answers, rev-list)
    transfer_timeout: float = 4 * 3600.0  # a clone or fetch, however much progress it makes
    stall_timeout: float = 300.0  # a clone or fetch that prints nothing for this long
    object_timeout: float = 120.0  # one object from cat-file
    max_processes: int = 4  # git processes running at once, process-wide
    slot_wait: float = 600.0  # how long a call waits for a free process slot

    def __post_init__(self) -> None:
        if self.max_processes < 1:
            raise ValueError("max_processes must be at least 1")
        if min(self.quick_timeout, self.transfer_timeout, self.stall_timeout) <= 0:
            raise ValueError("timeouts must be positive")


class _Slots:
    """A counting gate: at most `limit` git processes alive, counted where they start."""

    def __init__(self, limits: GitLimits) -> None:
        self.limits = limits
        self._cond = threading.Condition()
        self.running = 0
        self.peak = 0
        self.started = 0

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        self.acquire()
        try:
            yield
        finally:
            self.release()

    def acquire(self) -> None:
        limits = self.limits
        with self._cond:
            ok = self._cond.wait_for(lambda: self.running < limits.max_processes, limits.slot_wait)
            if not ok:
                raise GitError(
                    f"{self.running} git processes are already running; try again later."
                )
            self.running += 1
            self.started += 1
            self.peak = max(self.peak, self.running)

    def release(self) -> None:
        with self._cond:
            self.running -= 1
            self._cond.notify()


SLOTS = _Slots(GitLimits())


def limits() -> GitLimits:
    return SLOTS.limits


def configure(new: GitLimits) -> None:
    """Apply `new` to every git call from now on (running ones keep their deadlines)."""
    with SLOTS._cond:
        SLOTS.limits = new
        SLOTS._cond.notify_all()


# Prepended to every command: nothing a repository's config says may run code or recurse.
HARDENING = (
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.fsmonitor=false",
    "-c", "submodule.recurse=false",
    "-c", "fetch.recurseSubmodules=false",
    "-c", "protocol.ext.allow=never",
    "-c", "gc.autoDetach=false",  # auto gc after a fetch stays inside our deadline
    "-c", "credential.interactive=false",
)  # fmt: skip


class GitError(SourceError):
    """A git command failed. `stderr` is already scrubbed of secrets and userinfo."""

    user_message = "A git command failed."

    def __init__(self, user_message: str | None = None, *, stderr: str = "") -> None:
        super().__init__(user_message, detail=first_line(stderr))
        self.stderr = stderr


def first_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    fatal = [ln for ln in lines if ln.startswith(("fatal:", "error:"))]
    return (fatal or lines or [""])[0][:300]


def base_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for every git call: no prompts, no lazy fetches, English messages."""
    env = dict(os.environ)
    env.update(
        LC_ALL="C",
        LANGUAGE="C",
        GIT_TERMINAL_PROMPT="0",
        GCM_INTERACTIVE="never",
        SSH_ASKPASS_REQUIRE="never",
        GIT_NO_LAZY_FETCH="1",
        GIT_NO_REPLACE_OBJECTS="1",  # read what the commit holds, not what refs/replace says
        GIT_OPTIONAL_LOCKS="0",
    )
    env.update(extra or {})
    return env


def trusting(root: Path) -> dict[str, str]:
    """Environment that lets git read the repository at `root` whoever owns it.

    Git refuses a repository owned by another user ("dubious ownership"), which is what a
    checkout mounted into a container is. The operator named this path, and HARDENING
    keeps its own config from running hooks or fsmonitor, so it is trusted: exactly this
    path, as command-line config (`safe.directory` is read from nowhere less protected).
    """
    return config_env("safe.directory", str(root))


@dataclass(frozen=True, slots=True)
class Git:
    """Runs git in `cwd` with `env` (already complete) and scrubs `secrets` from errors."""

    cwd: Path
    env: Mapping[str, str] = field(default_factory=base_env)
    secrets: tuple[str, ...] = ()

    def run(
        self,
        *args: str,
        timeout: float | None = None,
        check: bool = True,
        input: bytes = b"",
        transfer: bool = False,
    ) -> bytes:
        """stdout of `git args...`; GitError (with scrubbed stderr) on failure or timeout.

        `transfer`: a clone or fetch, bounded by the stall and transfer limits
        instead of the quick one (pass `--progress` so progress counts as such).
        """
        code, out, err = self._call(args, timeout, input, transfer)
        if check and code != 0:
            raise GitError(f"git {command_name(args)} failed.", stderr=err)
        return out

    def text(self, *args: str, timeout: float | None = None, transfer: bool = False) -> str:
        return (
            self.run(*args, timeout=timeout, transfer=transfer).decode("utf-8", "replace").strip()
        )

    def try_text(
        self, *args: str, timeout: float | None = None, transfer: bool = False
    ) -> str | None:
        """stdout, or None when git exits non-zero (e.g. a ref that does not exist)."""
        code, out, _ = self._call(args, timeout, b"", transfer)
        return out.decode("utf-8", "replace").strip() if code == 0 else None

    def attempt(self, *args: str, timeout: float | None = None) -> tuple[int, bytes, str]:
        """Exit status, stdout (what git wrote, also when it failed part way) and scrubbed
        stderr; GitError only when git times out."""
        return self._call(args, timeout, b"", False)

    def popen(self, args: Sequence[str], **kwargs: object) -> subprocess.Popen[bytes]:
        """Start `git args...` (the caller holds a slot); SourceError if git cannot start."""
        try:
            return subprocess.Popen(  # type: ignore[call-overload,no-any-return]
                ["git", *HARDENING, *args],
                cwd=self.cwd,
                env=dict(self.env),
                start_new_session=True,  # no controlling terminal: ssh and git cannot prompt
                **kwargs,
            )
        except FileNotFoundError as exc:
            raise SourceError("git is not installed on the server.") from exc
        except OSError as exc:
            raise SourceError(f"git could not be started ({exc.strerror}).") from exc

    def _call(
        self, args: Sequence[str], timeout: float | None, data: bytes, transfer: bool
    ) -> tuple[int, bytes, str]:
        bounds = limits()
        total = timeout or (bounds.transfer_timeout if transfer else bounds.quick_timeout)
        stall = bounds.stall_timeout if transfer else None
        with SLOTS.held():
            proc = self.popen(
                args,
                stdin=subprocess.PIPE if data else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            try:
                out, err = _exchange(proc, data, total, stall)
            except _Expired as expired:
                kill_group(proc)
                proc.wait()
                log.warning("git %s %s in %s", command_name(args), expired.what, self.cwd)
                raise GitError(f"git {command_name(args)} {expired.what}.") from None
            except BaseException:
                kill_group(proc)
                proc.wait()
                raise
        stderr = redact(err.decode("utf-8", "replace"), self.secrets)
        if proc.returncode != 0:
            log.debug("git %s exited %d: %s", command_name(args), proc.returncode, stderr.strip())
        return proc.returncode, out, stderr


def command_name(args: Sequence[str]) -> str:
    """The subcommand of `args`, past any leading `-c key=value` options."""
    rest = list(args)
    while len(rest) > 2 and rest[0] == "-c":
        rest = rest[2:]
    return rest[0] if rest else "?"


class _Expired(Exception):
    def __init__(self, what: str) -> None:
        self.what = what


_STDERR_KEEP = 64 << 10  # progress can run long: keep its tail, where errors are


def _exchange(
    proc: subprocess.Popen[bytes], data: bytes, total: float, stall: float | None
) -> tuple[bytes, bytes]:
    """Feed `data` to stdin and collect stdout and stderr until git exits or a limit passes."""
    assert proc.stdout is not None and proc.stderr is not None
    out, err = bytearray(), bytearray()
    sinks = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
    pending = memoryview(data)
    start = last = time.monotonic()
    with selectors.DefaultSelector() as selector:
        for fd in sinks:
            selector.register(fd, selectors.EVENT_READ)
        stdin = proc.stdin.fileno() if proc.stdin is not None else -1
        if stdin >= 0:
            os.set_blocking(stdin, False)
            selector.register(stdin, selectors.EVENT_WRITE)
        while selector.get_map():
            now = time.monotonic()
            deadline = min(start + total, last + stall) if stall else start + total
            if now >= deadline:
                if now >= start + total:
                    raise _Expired(f"timed out after {total:.0f} s")
                raise _Expired(f"made no progress for {stall:.0f} s")
            for key, _ in selector.select(deadline - now):
                last = time.monotonic()
                if key.fd == stdin:
                    pending = _write_some(key.fd, pending)
                    if not pending:
                        selector.unregister(stdin)
                        assert proc.stdin is not None
                        proc.stdin.close()
                    continue
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    selector.unregister(key.fd)
                    continue
                sink = sinks[key.fd]
                sink += chunk
                if sink is err and len(err) > 2 * _STDERR_KEEP:
                    del err[:-_STDERR_KEEP]
    try:
        proc.wait(timeout=max(1.0, start + total - time.monotonic()))
    except subprocess.TimeoutExpired:
        raise _Expired(f"timed out after {total:.0f} s") from None
    return bytes(out), bytes(err)


def _write_some(fd: int, pending: memoryview) -> memoryview:
    try:
        return pending[os.write(fd, pending[: 1 << 16]) :]
    except BlockingIOError:
        return pending
    except BrokenPipeError:  # git stopped reading (it failed): its exit status says why
        return pending[len(pending) :]


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill git and its helpers (remote-https, ssh, upload-pack), which may hold our pipes open."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()
