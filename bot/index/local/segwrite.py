"""When a repository's segment file is written: right after its change set commits, or,
inside `deferred()`, once the ingest that committed it has let go of its change sets.

Building a segment allocates about as much as the segment holds (numpy, through `mmap`);
done inside `apply`, it stacks on the ingest's own peak: every chunk, its text and its
term counts are still alive then (sympy: 337 MB against 291 MB deferred). Deferral is per
thread, since ingests of different repositories share one index from several threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from bot.runtime.memory import release_free_memory


class SegmentWriter:
    def __init__(self, write: Callable[[str], None]) -> None:
        self._write = write  # builds and writes one repository's file; never raises
        self._local = threading.local()

    def committed(self, repo: str) -> None:
        """`repo`'s change set committed: write its file now, or when `deferred` ends."""
        pending: set[str] | None = getattr(self._local, "pending", None)
        if pending is None:
            self._write(repo)
        else:
            pending.add(repo)

    @contextmanager
    def deferred(self) -> Iterator[None]:
        """Files of what this thread commits inside are written on leaving it (also after a
        failure: what committed is in the index), after freed memory went back to the OS."""
        if getattr(self._local, "pending", None) is not None:
            yield  # nested: the outermost writes
            return
        pending: set[str] = set()
        self._local.pending = pending
        try:
            yield
        finally:
            del self._local.pending
            if pending:
                release_free_memory()
                for repo in sorted(pending):
                    self._write(repo)
