"""A tiny store on SqliteFile that tests can crash mid-write."""

from __future__ import annotations

import sqlite3

from bot.store.sqlite import SqliteFile


def prepare(db: sqlite3.Connection) -> None:
    db.execute("CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")


def write_notes(file: SqliteFile, count: int = 300) -> None:
    def insert(db: sqlite3.Connection) -> None:
        with db:
            db.executemany(
                "INSERT INTO notes (body) VALUES (?)", [("note " * 30,) for _ in range(count)]
            )

    file.run(insert)
