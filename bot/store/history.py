"""A repository's recorded history in SQLite (`history.sqlite`): the `HistoryRecords` part
of the storage contract (`bot.store.base`). The statements are `bot.store.history_sql`'s,
shared with PostgreSQL; damage and a full disk are `SqliteFile`'s to handle."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

from bot.store.history_records import (
    CommitRecord,
    FileLines,
    HistoryHead,
    HistoryUpdate,
    PullRequest,
    TagRecord,
)
from bot.store.history_rows import tables
from bot.store.history_sql import HistorySQL
from bot.store.sqlite import SqliteFile

FILENAME = "history.sqlite"


def _prepare(db: sqlite3.Connection) -> None:
    for statement in tables("TEXT", "INTEGER"):
        db.execute(statement)


class SqliteHistory:
    def __init__(self, path: Path) -> None:
        self._file = SqliteFile(path, "history store", _prepare)
        self._sql = HistorySQL("?")

    def head(self, repo: str) -> HistoryHead | None:
        return self._file.run(lambda db: self._sql.head(db, repo))

    def last_seq(self, repo: str) -> int:
        return self._file.run(lambda db: self._sql.last_seq(db, repo))

    def apply(self, update: HistoryUpdate) -> None:
        self._file.write(lambda db: self._sql.apply(db, update))

    def commits(self, repo: str) -> list[CommitRecord]:
        return self._file.run(lambda db: self._sql.commits(db, repo))

    def file_lines(self, repo: str, paths: Iterable[str]) -> dict[str, FileLines]:
        wanted = list(paths)
        return self._file.run(lambda db: self._sql.file_lines(db, repo, wanted))

    def tags(self, repo: str) -> list[TagRecord]:
        return self._file.run(lambda db: self._sql.tags(db, repo))

    def pull_requests(self, repo: str, numbers: Iterable[int]) -> dict[int, PullRequest]:
        wanted = list(numbers)
        return self._file.run(lambda db: self._sql.pull_requests(db, repo, wanted))

    def put_pull_requests(self, repo: str, prs: Iterable[PullRequest]) -> None:
        items = list(prs)
        self._file.write(lambda db: self._sql.put_pull_requests(db, repo, items))

    def remove_repo(self, repo: str) -> None:
        self._file.write(lambda db: self._sql.remove(db, repo))

    def repos(self) -> list[str]:
        return self._file.run(self._sql.repos)

    def close(self) -> None:
        self._file.close()
