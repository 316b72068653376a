"""Object contents streamed from one long-lived `git cat-file --batch` process."""

from __future__ import annotations

import contextlib
import os
import re
import select
import subprocess
import tempfile
import time
import weakref
from collections import deque
from collections.abc import Iterable, Iterator
from typing import IO

from bot.errors import SourceError
from bot.ingest.git import SLOTS, Git, GitError, kill_group, limits
from bot.ingest.hosting import redact

_WINDOW = 32  # cat-file requests in flight; 32 x 65 bytes stays under a 4 KB pipe buffer
_OID = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")


class MissingObject(SourceError):
    """The repository does not have this object (and git may not fetch it)."""


class BlobReader:
    """Object contents from one long-lived `git cat-file --batch` process.

    `read_objects` keeps a small window of requests in flight so git inflates the
    next object while we consume this one. The running process holds one of the
    process-wide git slots until `close()`. Not thread-safe: one reader per thread.
    """

    def __init__(self, git: Git, *, timeout: float | None = None) -> None:
        self._git = git
        self._timeout = timeout if timeout is not None else limits().object_timeout
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
        """(oid, content) in request order; MissingObject if an object is missing."""
        for oid, kind, data in self.read_objects(oids):
            if data is None:
                raise MissingObject(f"Object {oid[:12]} is {kind} in the repository.")
            yield oid, data

    def read_objects(self, oids: Iterable[str]) -> Iterator[tuple[str, str, bytes | None]]:
        """(oid, type, content) in request order; ("missing", None) for an absent object."""
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
                yield (oid, *self._receive(oid))
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
        SLOTS.acquire()
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the process
        try:
            proc = self._git.popen(
                ["cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                bufsize=0,
            )
        except BaseException:
            self._stderr.close()
            SLOTS.release()
            raise
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

    def _receive(self, oid: str) -> tuple[str, bytes | None]:
        deadline = time.monotonic() + self._timeout
        header = self._line(deadline).decode("ascii", "replace").split()
        if header == [oid, "missing"]:
            return "missing", None  # a complete reply: the stream goes on
        if len(header) != 3 or header[0] != oid or not header[2].isdigit():
            self.close()
            state = header[-1] if header else "unreadable"
            raise SourceError(f"Object {oid[:12]} is {state} in the repository.")
        data = self._exact(int(header[2]) + 1, deadline)
        return header[1], data[:-1]  # each object is followed by a newline

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
        kill_group(proc)
        proc.wait()
    finally:
        SLOTS.release()
    if proc.stdout is not None:
        proc.stdout.close()
    stderr.close()
