"""One ingest per repository at a time, across threads and processes: flock on lock files
in `CODECITE_HOME/locks/` (one per repository, named by a hash of its name)."""

from __future__ import annotations

import fcntl
import hashlib
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bot.errors import BotError

_PAUSE = 0.05  # seconds between tries while waiting for a lock


class RepositoryBusy(BotError):
    user_message = "That repository is being indexed right now; try again when it finishes."


class FileLocks:
    """`hold(repo)` and `busy(repo)` over lock files; nothing to close (each hold opens its
    own file, so two threads of one process exclude each other just as two processes do)."""

    def __init__(self, home: Path) -> None:
        self._folder = home / "locks"

    @contextmanager
    def hold(self, repo: str, *, wait: float | None = None) -> Iterator[None]:
        """Hold the repository's lock; `wait` seconds at most (None = wait forever,
        0 = don't wait), then RepositoryBusy."""
        fd = os.open(self._file(repo), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            _acquire(fd, wait)
            yield
        finally:
            os.close(fd)  # closing releases the lock, also when the process dies

    def busy(self, repo: str) -> bool:
        """Whether an ingest of the repository holds its lock now (in any process).

        A shared lock is taken and dropped at once, so it never makes an ingest wait
        longer than that instant.
        """
        fd = os.open(self._file(repo), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    def close(self) -> None:
        """Nothing is held between calls."""

    def _file(self, repo: str) -> Path:
        self._folder.mkdir(parents=True, exist_ok=True)
        return self._folder / f"{hashlib.sha256(repo.encode()).hexdigest()[:24]}.lock"


def _acquire(fd: int, wait: float | None) -> None:
    if wait is None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise RepositoryBusy() from None
            time.sleep(_PAUSE)
