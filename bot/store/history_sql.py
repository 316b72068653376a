"""The history store's statements, written once for both backends.

`HistorySQL` holds the operations as functions of an open connection (sqlite3's or
psycopg's, both DB-API); `bot.store.history` (SQLite) and `bot.store.postgres.history`
run them in their own transactions. Only the placeholder differs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from bot.store import history_rows as rows
from bot.store.history_records import (
    CommitRecord,
    FileLines,
    HistoryHead,
    HistoryUpdate,
    PullRequest,
    TagRecord,
)

IN_CHUNK = 500  # values in one IN (...) list


class Conn(Protocol):
    def execute(self, sql: str, params: Sequence[Any] = ..., /) -> Any: ...


class HistorySQL:
    def __init__(self, mark: str) -> None:
        self.mark = mark
        m = mark
        self._commit = rows.insert("hist_commits", rows.COMMIT_COLUMNS, m, upsert_key="repo, seq")
        self._head = rows.insert("hist_heads", rows.HEAD_COLUMNS, m, upsert_key="repo")
        self._lines = rows.insert("hist_lines", "repo, path, runs", m, upsert_key="repo, path")
        self._tag = rows.insert("hist_tags", rows.TAG_COLUMNS, m, upsert_key="repo, name")
        self._pr = rows.insert("hist_prs", rows.PR_COLUMNS, m, upsert_key="repo, number")

    def head(self, conn: Conn, repo: str) -> HistoryHead | None:
        row = conn.execute(
            f"SELECT {rows.HEAD_COLUMNS} FROM hist_heads WHERE repo = {self.mark}", (repo,)
        ).fetchone()
        return None if row is None else rows.head_from_row(row)

    def last_seq(self, conn: Conn, repo: str) -> int:
        row = conn.execute(
            f"SELECT COALESCE(MAX(seq), 0) FROM hist_commits WHERE repo = {self.mark}", (repo,)
        ).fetchone()
        return int(str(row[0])) if row else 0

    def apply(self, conn: Conn, update: HistoryUpdate) -> None:
        repo, m = update.head.repo, self.mark
        if update.replace:
            self.remove(conn, repo, keep_prs=True)
        for c in update.commits:
            conn.execute(self._commit, rows.commit_row(repo, c))
        for sha, symbols in update.symbols.items():
            conn.execute(
                f"UPDATE hist_commits SET symbols = {m} WHERE repo = {m} AND sha = {m}",
                (rows._join(symbols), repo, sha),
            )
        for path in update.removed_paths:
            conn.execute(f"DELETE FROM hist_lines WHERE repo = {m} AND path = {m}", (repo, path))
        for f in update.files:
            if f.runs:
                conn.execute(self._lines, (repo, f.path, f.encode()))
            else:
                conn.execute(
                    f"DELETE FROM hist_lines WHERE repo = {m} AND path = {m}", (repo, f.path)
                )
        if update.tags or update.replace:
            conn.execute(f"DELETE FROM hist_tags WHERE repo = {m}", (repo,))
            for t in update.tags:
                conn.execute(self._tag, rows.tag_row(repo, t))
        conn.execute(self._head, rows.head_row(update.head))

    def commits(self, conn: Conn, repo: str) -> list[CommitRecord]:
        found = conn.execute(
            f"SELECT {rows.COMMIT_COLUMNS} FROM hist_commits WHERE repo = {self.mark} ORDER BY seq",
            (repo,),
        ).fetchall()
        return [rows.commit_from_row(r) for r in found]

    def file_lines(self, conn: Conn, repo: str, paths: Iterable[str]) -> dict[str, FileLines]:
        wanted = sorted(set(paths))
        out: dict[str, FileLines] = {}
        for i in range(0, len(wanted), IN_CHUNK):
            part = wanted[i : i + IN_CHUNK]
            marks = ", ".join([self.mark] * len(part))
            found = conn.execute(
                f"SELECT path, runs FROM hist_lines WHERE repo = {self.mark} AND path IN ({marks})",
                (repo, *part),
            ).fetchall()
            for path, runs in found:
                out[str(path)] = FileLines.decode(str(path), str(runs))
        return out

    def tags(self, conn: Conn, repo: str) -> list[TagRecord]:
        found = conn.execute(
            f"SELECT {rows.TAG_COLUMNS} FROM hist_tags WHERE repo = {self.mark} ORDER BY name",
            (repo,),
        ).fetchall()
        return [rows.tag_from_row(r) for r in found]

    def pull_requests(
        self, conn: Conn, repo: str, numbers: Iterable[int]
    ) -> dict[int, PullRequest]:
        wanted = sorted(set(numbers))
        out: dict[int, PullRequest] = {}
        for i in range(0, len(wanted), IN_CHUNK):
            part = wanted[i : i + IN_CHUNK]
            marks = ", ".join([self.mark] * len(part))
            found = conn.execute(
                f"SELECT {rows.PR_COLUMNS} FROM hist_prs WHERE repo = {self.mark} "
                f"AND number IN ({marks})",
                (repo, *part),
            ).fetchall()
            for r in found:
                pr = rows.pr_from_row(r)
                out[pr.number] = pr
        return out

    def put_pull_requests(self, conn: Conn, repo: str, prs: Iterable[PullRequest]) -> None:
        for pr in prs:
            conn.execute(self._pr, rows.pr_row(repo, pr))

    def remove(self, conn: Conn, repo: str, *, keep_prs: bool = False) -> None:
        for table in rows.TABLES:
            if keep_prs and table == "hist_prs":
                continue  # what the host said of a pull request does not change with a rewrite
            conn.execute(f"DELETE FROM {table} WHERE repo = {self.mark}", (repo,))

    def repos(self, conn: Conn) -> list[str]:
        return [
            str(r[0]) for r in conn.execute("SELECT repo FROM hist_heads ORDER BY repo").fetchall()
        ]
