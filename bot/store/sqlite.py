"""The small SQLite files codecite keeps (run log, feedback, event claims, caches): one way to
open them, and damage that never stops the bot.

    file = SqliteFile(home / "runs.sqlite", "run log", prepare=create_tables)
    rows = file.run(lambda db: db.execute("SELECT ...").fetchall())
    file.close()

`run` holds the file's lock around one operation. A file found damaged, at
opening or by any later statement ("file is not a database", "database disk
image is malformed"), is renamed `NAME.damaged-<UTC time>` (its -wal/-shm
removed), a fresh one is started and the operation runs once more on it: a read
finds nothing, a write lands in the new file. One warning says what happened
(`SetAside.sentence`), and `notices()` keeps it for the `status` command (which
also finds, by their names, files other processes set aside in the last week).

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
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypeVar

from bot.errors import DiskFullError, StoreError
from bot.store.open_markers import OpenMarker

log = logging.getLogger(__name__)

T = TypeVar("T")
Prepare = Callable[[sqlite3.Connection], None]

_DAMAGE_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
_NEARLY_FULL_BYTES = 256 * 1024  # an I/O error with less free than this is a full disk
_SIDECARS = ("-wal", "-shm", "-journal")
_KEEP_NOTICES = 50
_ASIDE = ".damaged-"
_STAMP = "%Y%m%dT%H%M%S.%fZ"
RECENT = timedelta(days=7)  # how long `status` mentions a file set aside


class DamagedFile(sqlite3.DatabaseError):
    """`PRAGMA quick_check` found a problem SQLite had not reported yet."""


@dataclass(frozen=True, slots=True)
class SetAside:
    """One damaged file set aside, and the sentence that tells a user."""

    what: str  # "run log"
    path: Path
    kept: Path
    at: datetime
    remedy: str = ""  # e.g. "the next reindex refills it"

    def sentence(self) -> str:
        then = f"; {self.remedy}" if self.remedy else ""
        return (
            f"The {self.what} was damaged and has been started afresh "
            f"(kept as {self.kept.name}){then}."
        )


_notices: list[SetAside] = []
_notices_lock = threading.Lock()


_described: dict[str, tuple[str, str]] = {}  # file name -> (what, remedy), as stores say


def describe(name: str, what: str, remedy: str = "") -> None:
    """How to speak of the file `name` when another process is found to have set it aside."""
    with _notices_lock:
        _described[name] = (what, remedy)


def notices(folders: Iterable[Path] = (), *, within: timedelta = RECENT) -> list[SetAside]:
    """The files set aside in `folders`, by this process or (found on disk) by any other in
    the last `within`; oldest first. No folders: what this process set aside anywhere."""
    places = {folder.resolve() for folder in folders}
    with _notices_lock:
        found = {n.kept: n for n in _notices if not places or n.kept.parent.resolve() in places}
        described = dict(_described)
    since = datetime.now(UTC) - within
    for folder in dict.fromkeys(folders):
        for kept in folder.glob(f"*{_ASIDE}*"):
            notice = _on_disk(kept, described)
            if notice is not None and notice.at >= since:
                found.setdefault(kept, notice)
    return sorted(found.values(), key=lambda n: n.at)


def _on_disk(kept: Path, described: dict[str, tuple[str, str]]) -> SetAside | None:
    name, _, stamp = kept.name.rpartition(_ASIDE)
    try:
        at = datetime.strptime(stamp, _STAMP).replace(tzinfo=UTC)
    except ValueError:
        return None
    what, remedy = described.get(name, (f"file {name}", ""))
    return SetAside(what, kept.with_name(name), kept, at, remedy)


def _remember(notice: SetAside) -> None:
    with _notices_lock:
        _notices.append(notice)
        del _notices[:-_KEEP_NOTICES]


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
        """`op(db)` under the lock; on damage the file is set aside and `op` runs on a new one."""
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


def set_aside(path: Path, what: str, remedy: str = "") -> SetAside:
    """Rename a damaged file `NAME.damaged-<UTC time>` (sidecars removed), warn once, and
    remember it for `notices()`. Any kept file, not only SQLite, may go through here."""
    now = datetime.now(UTC)
    describe(path.name, what, remedy)
    kept = path.with_name(f"{path.name}{_ASIDE}{now.strftime(_STAMP)}")
    path.replace(kept)
    for sidecar in _SIDECARS:
        Path(f"{path}{sidecar}").unlink(missing_ok=True)
    notice = SetAside(what, path, kept, now, remedy)
    _remember(notice)
    log.warning("%s", notice.sentence())
    return notice


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
