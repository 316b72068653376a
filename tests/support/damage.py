"""Ways a store's file gets damaged on disk, applied to real files with real rows."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

GARBAGE = bytes(range(256)) * 64  # 16 KB that no SQLite header starts with
JUNK_BYTE = b"\xa5"  # not a valid b-tree page type, nor a valid JSON character


def settle(path: Path) -> None:
    """Fold a SQLite file's WAL into the file, so its rows are in the pages we damage."""
    db = sqlite3.connect(path)
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()
    for sidecar in ("-wal", "-shm"):
        Path(f"{path}{sidecar}").unlink(missing_ok=True)


def page_size(raw: bytes) -> int:
    size = int.from_bytes(raw[16:18], "big")
    return 65536 if size == 1 else size


def garble(path: Path) -> None:
    """The whole file replaced by bytes that are not a database (nor JSON)."""
    path.write_bytes(GARBAGE)


def damage_page(path: Path, page: int = 2) -> None:
    """One page in the middle of a SQLite file with rows overwritten with junk; the header
    and every other page stay intact."""
    settle(path)
    raw = bytearray(path.read_bytes())
    size = page_size(bytes(raw))
    assert len(raw) >= size * (page + 1), f"{path.name} is too small to damage page {page}"
    raw[size * (page - 1) : size * page] = JUNK_BYTE * size
    path.write_bytes(bytes(raw))


def truncate(path: Path) -> None:
    """The file cut to half its length, as a copy interrupted half-way leaves it."""
    settle(path)
    raw = path.read_bytes()
    assert len(raw) >= 3 * page_size(raw), f"{path.name} is too small to truncate usefully"
    path.write_bytes(raw[: len(raw) // 2])


def damage_text(path: Path) -> None:
    """For a text (JSON) file: bytes in the middle overwritten, as a damaged block would."""
    raw = bytearray(path.read_bytes())
    middle = len(raw) // 2
    raw[middle : middle + 64] = JUNK_BYTE * 64
    path.write_bytes(bytes(raw))


def truncate_text(path: Path) -> None:
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])


SQLITE_DAMAGE: dict[str, Callable[[Path], None]] = {
    "garbled": garble,
    "damaged-page": damage_page,
    "truncated": truncate,
}
TEXT_DAMAGE: dict[str, Callable[[Path], None]] = {
    "garbled": garble,
    "damaged-page": damage_text,
    "truncated": truncate_text,
}
