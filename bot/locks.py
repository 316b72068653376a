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
    folder = home / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    key = hashlib.sha256(name.encode()).hexdigest()[:24]
    fd = os.open(folder / f"{key}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        _acquire(fd, wait)
        yield
    finally:
        os.close(fd)  # closing releases the lock, also when the process dies


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
