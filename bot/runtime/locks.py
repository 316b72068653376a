"""One ingest per repository at a time, across threads and processes (flock on a file)."""

from __future__ import annotations

import fcntl
import hashlib
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bot.errors import BotError


class RepositoryBusy(BotError):
    user_message = "That repository is being indexed right now; try again when it finishes."


@contextmanager
def repo_lock(home: Path, name: str, *, wait: float | None = None) -> Iterator[None]:
    """Hold the repository's lock; `wait` seconds at most (None = wait forever, 0 = don't wait).

    Each call opens the lock file anew, so two threads of one process exclude
    each other just as two processes do.
    """
    fd = os.open(_lock_file(home, name), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        _acquire(fd, wait)
        yield
    finally:
        os.close(fd)  # closing releases the lock, also when the process dies


def repo_busy(home: Path, name: str) -> bool:
    """Whether an ingest of the repository holds its lock now (in any process).

    A shared lock is taken and dropped at once, so it never makes an ingest wait
    longer than that instant.
    """
    fd = os.open(_lock_file(home, name), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _lock_file(home: Path, name: str) -> Path:
    folder = home / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{hashlib.sha256(name.encode()).hexdigest()[:24]}.lock"


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
            time.sleep(0.05)
