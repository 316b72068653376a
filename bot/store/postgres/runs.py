"""The run log in PostgreSQL (`RunRecords`): the same rules as `bot.store.runs` (a run is
written at its start and completed at its end; 200 kept per repository; writes are
best-effort), shared by every process on the database."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TypeVar

from bot.errors import BotError
from bot.store.postgres.connection import Database
from bot.store.records import DONE, INTERRUPTED, RUNNING, Run, run_columns, run_from_columns
from bot.store.runs import KEEP_PER_REPO

if TYPE_CHECKING:
    import psycopg

    Conn = psycopg.Connection[tuple[object, ...]]

log = logging.getLogger(__name__)

T = TypeVar("T")

_COLUMNS = (
    "repo, started_at, seconds, trigger, commit_sha, files_added, files_changed, files_removed, "
    "chunks_added, chunks_removed, embedded_inputs, embedding_tokens, error, "
    "embedding_tokens_saved, state, secret_files, key_blocks, redactions"
)
_INSERT = f"INSERT INTO runs ({_COLUMNS}) VALUES ({', '.join(['%s'] * 18)}) RETURNING id"
_UPDATE = (
    f"UPDATE runs SET {', '.join(f'{c.strip()} = %s' for c in _COLUMNS.split(','))} WHERE id = %s"
)


def _aware(at: datetime) -> datetime:
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def _to_row(run: Run) -> tuple[object, ...]:
    return run_columns(run, _aware(run.started_at))


def _from_row(row: Sequence[object]) -> Run:
    started = row[1]
    assert isinstance(started, datetime)
    return run_from_columns(row, started.astimezone(UTC))


class PostgresRunLog:
    """Reads raise StoreError; writes are logged when they fail, never raised."""

    def __init__(self, database: Database) -> None:
        self._db = database

    def _write(self, op: Callable[[Conn], T]) -> T | None:
        try:
            return self._db.run(op)
        except BotError as exc:
            log.warning("the run log was not updated: %s", exc.user_message)
            log.info("run log write failed: %s", exc.detail)
            return None

    def begin(self, repo: str, started: datetime, trigger: str) -> int | None:
        """Record a run starting now (under the repository's lock): any run of `repo` still
        marked running was cut short."""

        def insert(conn: Conn) -> int:
            conn.execute(
                "UPDATE runs SET state = %s WHERE repo = %s AND state = %s",
                (INTERRUPTED, repo, RUNNING),
            )
            row = conn.execute(_INSERT, _to_row(Run(repo, started, 0.0, trigger, state=RUNNING)))
            run_id = int(str(row.fetchone()[0]))  # type: ignore[index]
            _trim(conn, repo)
            return run_id

        return self._write(insert)

    def finish(self, run_id: int | None, run: Run) -> None:
        if run_id is None:
            self.record(run)
            return
        self._write(lambda conn: conn.execute(_UPDATE, (*_to_row(run), run_id)))

    def record(self, run: Run) -> None:
        def insert(conn: Conn) -> None:
            conn.execute(_INSERT, _to_row(run))
            _trim(conn, run.repo)

        self._write(insert)

    def last(self, repo: str) -> Run | None:
        return self._latest(repo, "")

    def last_ok(self, repo: str) -> Run | None:
        return self._latest(repo, f"AND state = '{DONE}' AND error = ''")

    def _latest(self, repo: str, condition: str) -> Run | None:
        sql = f"SELECT {_COLUMNS} FROM runs WHERE repo = %s {condition} ORDER BY id DESC LIMIT 1"
        row = self._db.run(lambda conn: conn.execute(sql.encode(), (repo,)).fetchone())
        return None if row is None else _from_row(row)

    def embedding_totals(self, repo: str) -> tuple[int, int]:
        row = self._db.run(
            lambda conn: conn.execute(
                "SELECT COALESCE(SUM(embedding_tokens), 0), "
                "COALESCE(SUM(embedding_tokens_saved), 0) FROM runs WHERE repo = %s",
                (repo,),
            ).fetchone()
        )
        return (int(str(row[0])), int(str(row[1]))) if row else (0, 0)

    def set_next_run(self, repo: str, at: datetime | None) -> None:
        if at is None:
            self._write(lambda conn: conn.execute("DELETE FROM next_runs WHERE repo = %s", (repo,)))
            return
        when = _aware(at)
        self._write(
            lambda conn: conn.execute(
                "INSERT INTO next_runs VALUES (%s, %s) "
                "ON CONFLICT (repo) DO UPDATE SET at = excluded.at",
                (repo, when),
            )
        )

    def next_run(self, repo: str) -> datetime | None:
        row = self._db.run(
            lambda conn: conn.execute(
                "SELECT at FROM next_runs WHERE repo = %s", (repo,)
            ).fetchone()
        )
        if row is None:
            return None
        at = row[0]
        assert isinstance(at, datetime)
        return at.astimezone(UTC)

    def forget(self, repo: str) -> int:
        """Drop every run of `repo` and its next run; raises StoreError (see `RunLog`)."""

        def delete(conn: Conn) -> int:
            conn.execute("DELETE FROM next_runs WHERE repo = %s", (repo,))
            return int(conn.execute("DELETE FROM runs WHERE repo = %s", (repo,)).rowcount)

        return self._db.run(delete)

    def close(self) -> None:
        """The pool belongs to the store set (closed with it)."""


def _trim(conn: Conn, repo: str) -> None:
    conn.execute(
        "DELETE FROM runs WHERE repo = %s AND id NOT IN "
        "(SELECT id FROM runs WHERE repo = %s ORDER BY id DESC LIMIT %s)",
        (repo, repo, KEEP_PER_REPO),
    )
