"""Reads beside a write: one read-only connection per thread to a `SqliteFile`, and each
read one snapshot (a read transaction), so a read sees one committed state while a
write goes on (WAL).

    readers = SnapshotReaders(file)
    with readers.reading() as db:
        rows = db.execute("SELECT ...").fetchall()
    readers.close()

Damage met by a read sets the file aside (once, whichever thread meets it) and the
read fails with StoreError; the next read uses the new file. A thread's connection
is closed when the thread is gone, or when the file it read was replaced.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from bot.errors import StoreError
from bot.store.sqlite import SqliteFile, is_damage, store_error


class SnapshotReaders:
    def __init__(self, file: SqliteFile) -> None:
        self._file = file
        self._failed = f"The {file.what} could not be read."
        self._lock = threading.Lock()
        self._local = threading.local()
        self._readers: dict[threading.Thread, sqlite3.Connection] = {}
        self._closed = False

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        db = self._reader()
        generation = self._local.generation
        try:
            if db.in_transaction:  # left open by a read that failed half-way
                db.execute("ROLLBACK")
            db.execute("BEGIN")  # one snapshot for every statement of this read
            try:
                yield db
            finally:
                if db.in_transaction:
                    db.execute("COMMIT")
        except (OSError, sqlite3.Error) as exc:
            if is_damage(exc):  # set aside: this read fails, the next one reads a new file
                self._file.replace_damaged(exc, seen=generation)
            raise store_error(exc, self._failed, self._file.path) from exc

    def close(self) -> None:
        """Close every thread's connection; idempotent."""
        with self._lock:
            self._closed = True
            for db in self._readers.values():
                db.close()
            self._readers.clear()

    def _reader(self) -> sqlite3.Connection:
        """This thread's read connection to the current file, opened on first use."""
        generation = self._file.follow()
        mine: sqlite3.Connection | None = getattr(self._local, "db", None)
        if mine is not None and self._local.generation == generation:
            return mine
        with self._lock:
            if self._closed:
                raise StoreError(f"The {self._file.what} is closed.")
            if mine is not None:  # the file was set aside since: read the new one
                self._readers.pop(threading.current_thread(), mine).close()
            for thread in [t for t in self._readers if not t.is_alive()]:
                self._readers.pop(thread).close()  # its thread is gone: nobody else uses it
            try:
                db = self._file.connect()
                db.isolation_level = None  # explicit BEGIN/COMMIT around each read
                db.execute("PRAGMA query_only = 1")
            except sqlite3.Error as exc:
                raise store_error(exc, self._failed, self._file.path) from exc
            self._readers[threading.current_thread()] = db
        self._local.db, self._local.generation = db, generation
        return db
