"""bot/store/snapshots.py: one read connection per thread, each read one snapshot, damage
met by a read set aside once."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from bot.errors import StoreError
from bot.store.snapshots import SnapshotReaders
from bot.store.sqlite import SqliteFile
from tests.support.damage import damage_page


def prepare(db: sqlite3.Connection) -> None:
    db.execute("CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")


def open_notes(path: Path, rows: int = 0) -> SqliteFile:
    file = SqliteFile(path, "note store", prepare)
    if rows:
        file.write(
            lambda db: db.executemany(
                "INSERT INTO notes (body) VALUES (?)", [("note " * 30,)] * rows
            )
        )
    return file


def count(readers: SnapshotReaders) -> int:
    with readers.reading() as db:
        return int(db.execute("SELECT count(*) FROM notes").fetchone()[0])


def test_readers_of_finished_threads_are_closed(tmp_path: Path) -> None:
    file = open_notes(tmp_path / "notes.sqlite", rows=3)
    readers = SnapshotReaders(file)
    for _ in range(5):
        t = threading.Thread(target=count, args=(readers,))
        t.start()
        t.join()
    assert len(readers._readers) == 1  # each new reader closes those of threads that ended
    assert count(readers) == 3
    assert list(readers._readers) == [threading.current_thread()]
    readers.close()
    readers.close()
    file.close()


def test_a_read_left_half_done_does_not_block_the_next(tmp_path: Path) -> None:
    file = open_notes(tmp_path / "notes.sqlite", rows=3)
    readers = SnapshotReaders(file)
    readers._reader().execute("BEGIN")  # as if a read had failed between BEGIN and COMMIT
    assert count(readers) == 3
    readers.close()
    file.close()


def test_a_read_sees_one_state_while_a_write_lands(tmp_path: Path) -> None:
    file = open_notes(tmp_path / "notes.sqlite", rows=3)
    readers = SnapshotReaders(file)
    with readers.reading() as db:
        before = db.execute("SELECT count(*) FROM notes").fetchone()[0]
        file.write(lambda w: w.execute("INSERT INTO notes (body) VALUES ('new')"))
        after = db.execute("SELECT count(*) FROM notes").fetchone()[0]
    assert before == after == 3  # the snapshot the read began with
    assert count(readers) == 4
    readers.close()
    file.close()


def test_damage_met_by_a_read_is_set_aside_once_and_the_next_read_uses_a_new_file(
    tmp_path: Path,
) -> None:
    path = tmp_path / "notes.sqlite"
    open_notes(path, rows=300).close()
    damage_page(path)
    file = SqliteFile(path, "note store", prepare)
    readers = SnapshotReaders(file)
    with pytest.raises(StoreError) as raised:
        count(readers)
    assert raised.value.user_message == "The note store could not be read."
    assert len(list(tmp_path.glob("notes.sqlite.damaged-*"))) == 1
    assert count(readers) == 0  # the fresh file
    assert len(list(tmp_path.glob("notes.sqlite.damaged-*"))) == 1
    readers.close()
    with pytest.raises(StoreError, match="closed"):
        count(readers)
    file.close()
