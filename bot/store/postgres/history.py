"""A repository's recorded history in PostgreSQL (`HistoryRecords`), shared by every process
(`web` keeps nothing on disk): the statements are `bot.store.history_sql`'s, the tables
migration 9's."""

from __future__ import annotations

from collections.abc import Iterable

from bot.store.history_records import (
    CommitRecord,
    FileLines,
    HistoryHead,
    HistoryUpdate,
    PullRequest,
    TagRecord,
)
from bot.store.history_sql import HistorySQL
from bot.store.postgres.connection import Database


class PostgresHistory:
    def __init__(self, database: Database) -> None:
        self._db = database
        self._sql = HistorySQL("%s")

    def head(self, repo: str) -> HistoryHead | None:
        return self._db.run(lambda conn: self._sql.head(conn, repo))

    def last_seq(self, repo: str) -> int:
        return self._db.run(lambda conn: self._sql.last_seq(conn, repo))

    def apply(self, update: HistoryUpdate) -> None:
        self._db.run(lambda conn: self._sql.apply(conn, update))

    def commits(self, repo: str) -> list[CommitRecord]:
        return self._db.run(lambda conn: self._sql.commits(conn, repo))

    def file_lines(self, repo: str, paths: Iterable[str]) -> dict[str, FileLines]:
        wanted = list(paths)
        return self._db.run(lambda conn: self._sql.file_lines(conn, repo, wanted))

    def tags(self, repo: str) -> list[TagRecord]:
        return self._db.run(lambda conn: self._sql.tags(conn, repo))

    def pull_requests(self, repo: str, numbers: Iterable[int]) -> dict[int, PullRequest]:
        wanted = list(numbers)
        return self._db.run(lambda conn: self._sql.pull_requests(conn, repo, wanted))

    def put_pull_requests(self, repo: str, prs: Iterable[PullRequest]) -> None:
        items = list(prs)
        self._db.run(lambda conn: self._sql.put_pull_requests(conn, repo, items))

    def remove_repo(self, repo: str) -> None:
        self._db.run(lambda conn: self._sql.remove(conn, repo))

    def repos(self) -> list[str]:
        return self._db.run(self._sql.repos)

    def close(self) -> None:
        """The pool belongs to the store set (closed with it)."""
