"""bot.store.sqlite: damage recognised from SQLite's own errors, set aside once, unclean
stops checked at opening, a full disk never taken for damage."""

from __future__ import annotations

import errno
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from bot.errors import DiskFullError, StoreError
from bot.store.sqlite import SqliteFile, is_damage, is_disk_full, notices
from tests.support.damage import damage_page, garble, truncate
from tests.support.note_store import prepare, write_notes
from tests.support.paths import ROOT


def count(db: sqlite3.Connection) -> int:
    return int(db.execute("SELECT count(*) FROM notes").fetchone()[0])


def filled(path: Path) -> None:
    file = SqliteFile(path, "note store", prepare)
    write_notes(file)
    file.close()


def test_sqlite_reports_damage_with_codes_we_recognise(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.sqlite"
    garble(garbage)
    with pytest.raises(sqlite3.DatabaseError) as not_a_db:
        sqlite3.connect(garbage).execute("SELECT 1 FROM sqlite_schema").fetchall()
    paged = tmp_path / "paged.sqlite"
    filled(paged)
    damage_page(paged)
    with pytest.raises(sqlite3.DatabaseError) as malformed:
        sqlite3.connect(paged).execute("SELECT count(*) FROM notes").fetchall()
    assert is_damage(not_a_db.value) and is_damage(malformed.value)
    busy = sqlite3.OperationalError("database is locked")
    assert not is_damage(busy) and not is_disk_full(busy)


def test_a_full_disk_is_not_damage() -> None:
    full = sqlite3.OperationalError("database or disk is full")
    full.sqlite_errorcode = sqlite3.SQLITE_FULL  # type: ignore[attr-defined]
    assert is_disk_full(full) and not is_damage(full)
    assert is_disk_full(OSError(errno.ENOSPC, "No space left on device"))
    assert not is_disk_full(OSError(errno.EACCES, "Permission denied"))


@pytest.mark.parametrize("damage", [garble, damage_page, truncate])
def test_a_damaged_file_is_set_aside_once_and_the_operation_runs_on_a_new_one(
    tmp_path: Path, damage: object, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "notes.sqlite"
    filled(path)
    damage(path)  # type: ignore[operator]
    before = len(notices())
    with caplog.at_level(logging.WARNING):
        file = SqliteFile(path, "note store", prepare, remedy="nothing was lost")
        assert file.run(count) == 0  # the new file: empty, not an error
        write_notes(file, 3)
        assert file.run(count) == 3
        file.close()
    [kept] = tmp_path.glob("notes.sqlite.damaged-*")
    assert not Path(f"{kept}-wal").exists()
    [notice] = notices()[before:]
    assert notice.kept == kept and notice.path == path
    assert notice.sentence() == (
        f"The note store was damaged and has been started afresh (kept as {kept.name}); "
        "nothing was lost."
    )
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [notice.sentence()]


def test_a_healthy_file_is_never_set_aside(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    filled(path)
    file = SqliteFile(path, "note store", prepare)
    assert file.run(count) == 300
    with pytest.raises(StoreError) as raised:
        file.run(lambda db: db.execute("SELECT nonsense FROM notes"))
    assert raised.value.user_message == "The note store could not be read or written."
    file.close()
    assert not list(tmp_path.glob("*.damaged-*"))


def test_a_replacement_by_another_opener_is_followed_not_set_aside_again(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    filled(path)
    first = SqliteFile(path, "note store", prepare)
    second = SqliteFile(path, "note store", prepare)  # as another process would hold it
    assert first.run(count) == second.run(count) == 300
    first.close()
    second_inode = path.stat().st_ino
    damage_page(path)
    assert path.stat().st_ino == second_inode
    opener = SqliteFile(path, "note store", prepare)
    assert opener.run(count) == 0  # found the damage, set the file aside
    write_notes(opener, 2)
    assert second.run(count) == 2  # follows to the new file: no second set-aside
    second.close()
    opener.close()
    assert len(list(tmp_path.glob("notes.sqlite.damaged-*"))) == 1


CRASHER = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from bot.store.sqlite import SqliteFile
    from tests.support.note_store import prepare, write_notes
    file = SqliteFile(Path(sys.argv[1]), "note store", prepare)
    write_notes(file)
    os.kill(os.getpid(), signal.SIGKILL)
    """
)


def crash_while_open(path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CRASHER, str(path)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr


def test_an_unclean_stop_is_checked_at_the_next_opening(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "notes.sqlite"
    crash_while_open(path)
    assert list(tmp_path.glob(".notes.sqlite.open-*")), "the killed process left its marker"
    with caplog.at_level(logging.INFO, logger="bot.store.sqlite"):
        file = SqliteFile(path, "note store", prepare)
    assert "notes.sqlite checked: ok" in caplog.text
    assert file.run(count) == 300  # committed rows survive a kill
    file.close()
    assert not list(tmp_path.glob(".notes.sqlite.open-*"))  # a clean close leaves no marker


def test_damage_after_an_unclean_stop_is_found_at_opening(tmp_path: Path) -> None:
    """A page no opening statement reads: only quick_check finds it before a user does."""
    path = tmp_path / "notes.sqlite"
    crash_while_open(path)
    damage_page(path)
    file = SqliteFile(path, "note store", prepare)
    assert file.resets == 1  # set aside before the first operation
    assert file.run(count) == 0
    file.close()


def test_after_a_clean_stop_opening_reads_no_page_it_does_not_need(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    filled(path)
    damage_page(path)
    file = SqliteFile(path, "note store", prepare)
    assert file.resets == 0  # no quick_check: the damage waits for a statement to meet it
    assert file.run(count) == 0 and file.resets == 1
    file.close()


def test_an_unwritable_directory_is_a_store_error_not_damage(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes anywhere")
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(StoreError) as raised:
        SqliteFile(locked / "notes.sqlite", "note store", prepare)
    assert not isinstance(raised.value, DiskFullError)


# -- busy files and write transactions -------------------------------------------------------


def hold_write_lock(path: Path, seconds: float) -> threading.Thread:
    """Another connection (as another process would) holds the write lock for `seconds`."""
    held = threading.Event()

    def hold() -> None:
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("BEGIN IMMEDIATE")
        db.execute("INSERT INTO notes (body) VALUES ('theirs')")
        held.set()
        time.sleep(seconds)
        db.execute("COMMIT")
        db.close()

    thread = threading.Thread(target=hold)
    thread.start()
    assert held.wait(10)
    return thread


def test_a_write_waits_for_another_writer_and_lands_after_it(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    file = SqliteFile(path, "note store", prepare, timeout=10)
    holder = hold_write_lock(path, 0.3)
    file.write(lambda db: db.execute("INSERT INTO notes (body) VALUES ('mine')"))
    holder.join()
    bodies = file.run(lambda db: [r[0] for r in db.execute("SELECT body FROM notes ORDER BY id")])
    assert bodies == ["theirs", "mine"]
    file.close()


def test_a_write_lock_held_past_the_timeout_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    file = SqliteFile(path, "note store", prepare, timeout=0.2)
    holder = hold_write_lock(path, 1.5)
    began = time.monotonic()
    with pytest.raises(StoreError) as raised:
        file.write(lambda db: db.execute("INSERT INTO notes (body) VALUES ('mine')"))
    waited = time.monotonic() - began
    holder.join()
    assert raised.value.user_message == "The note store could not be read or written."
    assert 0.2 <= waited < 1.5  # the timeout, not the holder, ended the wait
    assert file.run(count) == 1 and not list(tmp_path.glob("*.damaged-*"))
    file.close()


def test_an_operation_refused_at_once_as_busy_is_tried_again(tmp_path: Path) -> None:
    """SQLite refuses a read transaction's upgrade to a write at once (no busy wait):
    the operation runs again, within the busy timeout."""
    file = SqliteFile(tmp_path / "notes.sqlite", "note store", prepare, timeout=5)
    tries: list[int] = []

    def refused_once(db: sqlite3.Connection) -> int:
        tries.append(1)
        if len(tries) == 1:
            busy = sqlite3.OperationalError("database is locked")
            busy.sqlite_errorcode = sqlite3.SQLITE_BUSY  # type: ignore[attr-defined]
            raise busy
        db.execute("INSERT INTO notes (body) VALUES ('once')")
        return count(db)

    assert file.write(refused_once) == 1 and len(tries) == 2
    file.close()


def test_a_write_that_raises_leaves_nothing(tmp_path: Path) -> None:
    file = SqliteFile(tmp_path / "notes.sqlite", "note store", prepare)

    def half(db: sqlite3.Connection) -> None:
        db.execute("INSERT INTO notes (body) VALUES ('half')")
        raise ValueError("changed my mind")

    with pytest.raises(ValueError):
        file.write(half)
    assert file.run(count) == 0
    file.close()
    file.close()  # closing twice is harmless
