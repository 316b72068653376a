"""LocalIndex's SQLite file: a connection per thread, transactions, and damage recovered.

    file = IndexFile(path, busy_timeout=30, opened=on_open)   # on_open(segments_uid)
    with file.read() as conn: ...       # one snapshot
    with file.write() as conn: ...      # one BEGIN IMMEDIATE transaction
    file.query(sql, args)               # one statement

Concurrency: every thread gets its own connection (WAL lets readers run beside a
writer and see only committed transactions). Writes are serialised by a lock inside
the process and by `BEGIN IMMEDIATE` plus the busy timeout across processes, so a CLI
reindex can run while the server answers.

Damage (SQLite finds the file is not a database, or a page is malformed), at opening or
in any statement, sets the file aside and starts a new one that awaits a rebuild from
the repositories (`recovery`); the statement that met it fails with one sentence
(`recovery.REBUILDING`), and `damaged` is called so that a process that ingests can
start the rebuild at once. A file another process set aside is followed (a new inode
at the path). Each (re)opening calls `opened(segments_uid)`: the index's caches follow.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bot.errors import StoreError
from bot.index.base import Rebuild
from bot.index.local import recovery, schema
from bot.store.sqlite import describe, raise_if_disk_full, set_aside

log = logging.getLogger(__name__)

DAMAGED = "The index file is damaged or is not a codecite index; delete it and reindex."
_BUSY = "The index is busy with another update; please try again shortly."


@contextmanager
def translated() -> Iterator[None]:
    """Turn lower-layer failures into StoreError with a sentence a user may see."""
    try:
        yield
    except StoreError:
        raise
    except sqlite3.DatabaseError as exc:
        raise_if_disk_full(exc)
        text = str(exc).lower()
        if "locked" in text or "busy" in text:
            raise StoreError(_BUSY, detail=str(exc)) from exc
        if "not a database" in text or "malformed" in text or "corrupt" in text:
            raise StoreError(DAMAGED, detail=str(exc)) from exc
        raise StoreError(detail=f"{type(exc).__name__}: {exc}") from exc
    except sqlite3.Error as exc:
        raise StoreError(detail=f"{type(exc).__name__}: {exc}") from exc
    except OSError as exc:
        raise_if_disk_full(exc)
        raise StoreError(detail=f"{type(exc).__name__}: {exc}") from exc


class IndexFile:
    def __init__(
        self,
        path: Path,
        *,
        busy_timeout: float,
        opened: Callable[[str], None],
        damaged: Callable[[], None] | None = None,
    ) -> None:
        self.path = path
        self.damaged = damaged
        self._busy_timeout = busy_timeout
        self._opened = opened
        self._sources = recovery.sources_path(path)
        describe(path.name, recovery.WHAT, recovery.REMEDY)  # for `status`, in any process
        self._local = threading.local()
        self._conns: dict[threading.Thread, sqlite3.Connection] = {}
        self._conns_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._recover_lock = threading.RLock()
        self._generation = 0  # bumped at every reopening: connections of before are stale
        self._inode = 0
        self.closed = False
        try:
            self._open()
        except StoreError as exc:
            if exc.user_message != DAMAGED:
                self.close()
                raise
            self._recover(exc, self._generation)  # damaged at opening: set aside, rebuilt
        except BaseException:
            self.close()
            raise

    def _open(self) -> None:
        with translated():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            schema.prepare(self._conn(), busy_timeout=self._busy_timeout)
            uid = schema.segments_uid(self._conn())
            self._inode = self.path.stat().st_ino
        self._opened(uid)

    # -- connections and transactions ----------------------------------------

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and getattr(self._local, "generation", -1) == self._generation:
            return conn
        conn = schema.connect(self.path, busy_timeout=self._busy_timeout)
        with self._conns_lock:
            if self.closed:
                conn.close()
                raise StoreError("The index is closed.")
            for thread in [t for t in self._conns if not t.is_alive()]:
                self._conns.pop(thread).close()
            old = self._conns.pop(threading.current_thread(), None)
            if old is not None:
                old.close()  # of a file since set aside
            self._conns[threading.current_thread()] = conn
        self._local.conn, self._local.generation = conn, self._generation
        return conn

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """One snapshot for several statements."""
        self.check_open()
        with self._guarded(), translated():
            conn = self._conn()
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                schema.rollback(conn)  # a read transaction has nothing to commit

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: all of it commits, or none of it does."""
        self.check_open()
        with self._guarded(), self._write_lock, translated():
            conn = self._conn()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                schema.rollback(conn)
                raise

    def query(self, sql: str, args: Sequence[object] = ()) -> list[Any]:
        self.check_open()
        with self._guarded(), translated():
            return self._conn().execute(sql, args).fetchall()

    def check_open(self) -> None:
        if self.closed:
            raise StoreError("The index is closed.")

    # -- damage --------------------------------------------------------------

    def remember_sources(self, states: Sequence[Any]) -> None:
        """The repositories' sources beside the file, for a rebuild (`recovery`)."""
        recovery.remember(self._sources, states)

    def rebuilds(self) -> list[Rebuild]:
        """Repositories a new file (after damage) awaits; [] for a file that is whole."""
        with self.read() as conn:
            return recovery.pending(conn)

    def verify(self) -> bool:
        """`PRAGMA quick_check` of the whole file; False, with the file set aside for a
        rebuild, when it is damaged."""
        try:
            with self._guarded():
                with self.read() as conn:
                    found = [str(row[0]) for row in conn.execute("PRAGMA quick_check")]
                if found != ["ok"]:
                    raise StoreError(DAMAGED, detail=f"quick_check: {found[0][:200]}")
        except StoreError as exc:
            if exc.user_message != recovery.REBUILDING:
                raise
            return False
        return True

    @contextmanager
    def _guarded(self) -> Iterator[None]:
        """Damage met in the body sets the file aside (`_recover`) and fails with one
        sentence; a file another process set aside is followed first."""
        self._follow()
        seen = self._generation
        try:
            yield
        except StoreError as exc:
            if exc.user_message != DAMAGED:
                raise
            self._recover(exc, seen)
            raise StoreError(recovery.REBUILDING, detail=exc.detail) from exc

    def _follow(self) -> None:
        """Another process set the file aside and started a new one: use that one."""
        try:
            inode = self.path.stat().st_ino
        except OSError:  # set aside a moment ago (the new one is being made), or gone
            return
        if inode == self._inode or self.closed:
            return
        with self._recover_lock:
            if inode != self._inode and not self.closed:
                self._drop_connections()
                with contextlib.suppress(StoreError):  # met again by the next statement
                    self._open()

    def _recover(self, exc: StoreError, seen: int) -> None:
        """Set the damaged file aside, start a new one and record what it awaits."""
        with self._recover_lock:
            if seen != self._generation:
                return  # another thread did it already
            log.info("the index file is damaged (%s); setting it aside", exc.detail)
            self._drop_connections()
            kept = set_aside(self.path, recovery.WHAT, recovery.REMEDY).kept
            rebuilds = recovery.wanted(kept, self._sources)
            self._open()
            with self._write_lock, translated():
                conn = self._conn()
                conn.execute("BEGIN IMMEDIATE")
                try:
                    recovery.store(conn, rebuilds)
                    conn.execute("COMMIT")
                except BaseException:
                    schema.rollback(conn)
                    raise
            names = ", ".join(r.name for r in rebuilds) or "nothing it knows of"
            log.info("the new index file awaits a rebuild of: %s", names)
        if self.damaged is not None:
            self.damaged()

    def _drop_connections(self) -> None:
        with self._conns_lock:
            conns = list(self._conns.values())
            self._conns.clear()
            self._generation += 1
        for conn in conns:
            with contextlib.suppress(sqlite3.Error):
                conn.close()

    def close(self) -> None:
        """Close every connection; later calls raise StoreError. Safe to call twice."""
        with self._conns_lock:
            if self.closed:
                return
            self.closed = True
            conns = list(self._conns.values())
            self._conns.clear()
        own: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if own is not None and own in conns:
            try:
                own.execute("PRAGMA optimize")
            except sqlite3.Error:
                log.debug("PRAGMA optimize failed on close", exc_info=True)
        for conn in conns:
            conn.close()
        self._local = threading.local()
