"""The SQLite files codecite keeps (run log, feedback, event claims, caches, symbol table,
Pinecone state): one way to open them, and damage that never stops the bot.

    file = SqliteFile(home / "runs.sqlite", "run log", prepare=create_tables)
    rows = file.run(lambda db: db.execute("SELECT ...").fetchall())
    file.write(lambda db: db.execute("INSERT ..."))  # one BEGIN IMMEDIATE transaction
    file.close()

`run` holds the file's lock around one operation. A file found damaged, at
opening or by any later statement ("file is not a database", "database disk
image is malformed"), is renamed `NAME.damaged-<UTC time>` (its -wal/-shm
removed; see `bot.store.aside`), a fresh one is started and the operation runs
once more on it: a read finds nothing, a write lands in the new file. One
warning says what happened (`SetAside.sentence`), and `notices()` keeps it for
the `status` command (which also finds, by their names, files other processes
set aside in the last week).

A busy file (another process holds the write lock) is waited for: SQLite's
busy timeout first, then, for an operation that can run again, a few more tries
within the same time (a read transaction that must become a write cannot wait
inside SQLite).

After an unclean stop (a process that had the file open died without closing
it, seen from the marker files `.NAME.open-<pid>-<n>` it left) the file gets
`PRAGMA quick_check` before use, so damage is found at once, not mid-answer.

A full disk is not damage: nothing is set aside, and the error is DiskFullError
with a sentence that says so. Other failures are StoreError.
"""

from __future__ import annotations

import errno
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TypeVar

from bot.errors import DiskFullError, StoreError
from bot.runtime import metrics
from bot.store.aside import RECENT, SetAside, describe, notices, set_aside
from bot.store.open_markers import OpenMarker

__all__ = [
    "RECENT",
    "DamagedFile",
    "SetAside",
    "SqliteFile",
    "describe",
    "is_busy",
    "is_damage",
    "is_disk_full",
    "notices",
    "raise_if_disk_full",
    "set_aside",
    "store_error",
]

log = logging.getLogger(__name__)

T = TypeVar("T")
Prepare = Callable[[sqlite3.Connection], None]

_DAMAGE_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
_BUSY_CODES = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})
_BUSY_PAUSE = 0.05  # seconds between tries of an operation that met a busy file
_NEARLY_FULL_BYTES = 256 * 1024  # an I/O error with less free than this is a full disk


class DamagedFile(sqlite3.DatabaseError):
    """`PRAGMA quick_check` found a problem SQLite had not reported yet."""


def is_damage(exc: BaseException) -> bool:
    """Whether `exc` says the file itself is broken (not busy, not full, not read-only)."""
    if isinstance(exc, DamagedFile):
        return True
    code = getattr(exc, "sqlite_errorcode", None)
    return (
        isinstance(exc, sqlite3.DatabaseError)
        and code is not None
        and code & 0xFF in (_DAMAGE_CODES)
    )


def is_busy(exc: BaseException) -> bool:
    """Whether `exc` says another connection holds the lock (worth trying again)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return (
        isinstance(exc, sqlite3.OperationalError)
        and code is not None
        and (code & 0xFF in _BUSY_CODES)
    )


def is_disk_full(exc: BaseException, where: Path | None = None) -> bool:
    """Whether `exc` comes from a full disk (or quota); `where` lets an I/O error be judged
    by the free space left (SQLite reports a -shm it cannot grow as a plain I/O error)."""
    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, errno.EDQUOT)
    code = getattr(exc, "sqlite_errorcode", None)
    if not isinstance(exc, sqlite3.Error) or code is None:
        return False
    if code & 0xFF == sqlite3.SQLITE_FULL:
        return True
    return code & 0xFF == sqlite3.SQLITE_IOERR and where is not None and _nearly_full(where)


def _nearly_full(where: Path) -> bool:
    folder = where if where.is_dir() else where.parent
    try:
        stats = os.statvfs(folder)
    except OSError:
        return False
    return stats.f_bavail * stats.f_frsize < _NEARLY_FULL_BYTES


def raise_if_disk_full(exc: BaseException, where: Path | None = None) -> None:
    """Raise DiskFullError (from `exc`) when `exc` comes from a full disk."""
    if is_disk_full(exc, where):
        raise DiskFullError(detail=f"{type(exc).__name__}: {exc}") from exc


def store_error(exc: BaseException, sentence: str, where: Path | None = None) -> StoreError:
    """The BotError for a lower-layer failure: DiskFullError for a full disk, else `sentence`."""
    detail = f"{type(exc).__name__}: {exc}"
    if is_disk_full(exc, where):
        return DiskFullError(detail=detail)
    return StoreError(sentence, detail=detail)


class SqliteFile:
    """One SQLite file and its connection, shared by threads under one lock.

    `prepare(db)` creates the tables (it runs at every opening). `autocommit`
    leaves transactions to the caller (BEGIN IMMEDIATE). `remedy` ends the
    sentence a user sees when the file is set aside; `on_reset` runs then.
    `always_check`: quick_check at every opening, for a file whose damage is best
    found before it is used (it is rebuilt from elsewhere at start).
    """

    def __init__(
        self,
        path: Path,
        what: str,
        prepare: Prepare,
        *,
        autocommit: bool = False,
        synchronous: str = "NORMAL",
        remedy: str = "",
        timeout: float = 10.0,
        on_reset: Callable[[], None] | None = None,
        always_check: bool = False,
    ) -> None:
        self.path = path
        self.what = what
        self.remedy = remedy
        self.resets = 0  # how many times this file was set aside and started afresh
        self.generation = 0  # bumped at every (re)opening: other connections must follow
        self._prepare = prepare
        self._autocommit = autocommit
        self._synchronous = synchronous
        self._timeout = timeout
        self._on_reset = on_reset
        self._always_check = always_check
        self._lock = threading.RLock()
        self._marker = OpenMarker(path)
        describe(path.name, what, remedy)
        self._inode = 0
        try:
            self._db = self._open()
        except (OSError, sqlite3.Error) as exc:
            self._marker.remove()
            raise store_error(exc, f"The {what} could not be opened.", path) from exc
        except BaseException:  # e.g. prepare refusing a file from another version
            self._marker.remove()
            raise

    def run(self, op: Callable[[sqlite3.Connection], T]) -> T:
        """`op(db)` under the lock; on damage the file is set aside and `op` runs on a new one;
        on a busy file `op` is tried again until the busy timeout has passed once more."""
        deadline = time.monotonic() + self._timeout
        while True:
            try:
                with metrics.timed_store("sqlite", self.what):
                    return self._run_once(op)
            except StoreError as exc:
                busy = isinstance(exc.__cause__, BaseException) and is_busy(exc.__cause__)
                if not busy or time.monotonic() >= deadline:
                    raise
            time.sleep(_BUSY_PAUSE)

    def write(self, op: Callable[[sqlite3.Connection], T]) -> T:
        """`op(db)` in one BEGIN IMMEDIATE transaction (the write lock taken first, so a
        check and the write that follows it see one state); committed when `op` returns,
        rolled back when it raises. Retried like `run`, so `op` must be safe to run again."""

        def in_transaction(db: sqlite3.Connection) -> T:
            db.execute("BEGIN IMMEDIATE")
            try:
                result = op(db)
            except BaseException:
                with suppress(sqlite3.Error):  # keep the error that got us here
                    db.rollback()
                raise
            db.commit()
            return result

        return self.run(in_transaction)

    def _run_once(self, op: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            try:
                self._follow_replacement()
                return op(self._db)
            except (OSError, sqlite3.Error) as exc:
                if not is_damage(exc):
                    raise self._error(exc) from exc
                self.replace_damaged(exc)
            try:
                return op(self._db)
            except (OSError, sqlite3.Error) as exc:
                raise self._error(exc) from exc

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One transaction for a body that cannot simply run again: on damage the file is
        set aside and started afresh, and the body's work is lost (StoreError)."""
        with self._lock:
            try:
                self._follow_replacement()
                with self._db:
                    yield self._db
            except (OSError, sqlite3.Error) as exc:
                if is_damage(exc):
                    self.replace_damaged(exc)
                raise self._error(exc) from exc

    def follow(self) -> int:
        """Reopen if another process replaced the file; the current generation."""
        with self._lock:
            try:
                self._follow_replacement()
            except (OSError, sqlite3.Error) as exc:
                raise self._error(exc) from exc
            return self.generation

    def replace_damaged(self, exc: BaseException, seen: int | None = None) -> None:
        """Set the file aside (when it is still the one we opened) and open a new one.

        `seen`: the generation the failing connection belonged to; when the file was
        replaced since, there is nothing left to do.
        """
        with self._lock:
            if seen is not None and seen != self.generation:
                return
            _close_quietly(self._db)
            try:
                if _inode(self.path) == self._inode:
                    self._set_aside(exc)
                self._db = self._open()
            except (OSError, sqlite3.Error) as err:
                raise self._error(err) from err

    def connect(self) -> sqlite3.Connection:
        """Another connection to the same file (e.g. one per reading thread), same settings."""
        db = sqlite3.connect(
            self.path,
            timeout=self._timeout,
            check_same_thread=False,
            isolation_level=None if self._autocommit else "DEFERRED",
        )
        try:
            db.execute(f"PRAGMA synchronous={self._synchronous}")
        except sqlite3.Error:
            db.close()
            raise
        return db

    def close(self) -> None:
        """Close the connection and remove this process's open marker; idempotent."""
        with self._lock:
            _close_quietly(self._db)
            self._marker.remove()

    # -- internals (callers hold the lock) --------------------------------------------------

    def _error(self, exc: BaseException) -> StoreError:
        return store_error(exc, f"The {self.what} could not be read or written.", self.path)

    def _follow_replacement(self) -> None:
        """Another process set our file aside: use the new one, not the renamed old one."""
        current = _inode(self.path)
        if current != self._inode:
            _close_quietly(self._db)
            self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        unclean = self._marker.place()
        try:
            return self._connect_prepared(check=unclean or self._always_check)
        except sqlite3.DatabaseError as exc:
            if not is_damage(exc):
                raise
            self._set_aside(exc)
            return self._connect_prepared(check=False)

    def _connect_prepared(self, *, check: bool) -> sqlite3.Connection:
        db = self.connect()
        try:
            if check:
                _quick_check(db, self.path)
            db.execute("PRAGMA journal_mode=WAL")
            self._prepare(db)
        except BaseException:
            db.close()
            raise
        self._inode = _inode(self.path)
        self.generation += 1
        return db

    def _set_aside(self, exc: BaseException) -> None:
        log.info("%s %s is damaged: %s: %s", self.what, self.path, type(exc).__name__, exc)
        set_aside(self.path, self.what, self.remedy)
        self.resets += 1
        if self._on_reset is not None:
            self._on_reset()


def _quick_check(db: sqlite3.Connection, path: Path) -> None:
    rows = [str(r[0]) for r in db.execute("PRAGMA quick_check").fetchall()]
    if rows != ["ok"]:
        raise DamagedFile(f"quick_check of {path.name}: {'; '.join(rows[:3])}")
    log.info("%s checked: ok", path)


def _inode(path: Path) -> int:
    try:
        return path.stat().st_ino
    except FileNotFoundError:
        return 0


def _close_quietly(db: sqlite3.Connection) -> None:
    with suppress(sqlite3.Error):
        db.close()
