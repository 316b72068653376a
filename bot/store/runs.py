"""A log of ingest runs per repository, for `status`: last run, its outcome, the next run.
In SQLite (`runs.sqlite`), the `RunRecords` part of the storage contract (`bot.store.base`).

Kept in the data directory so a standalone scheduler and the serving process
(or the CLI) see the same history. A run is written when it starts
(`begin`, under the repository's lock) and completed when it ends (`finish`),
so a process killed mid-ingest leaves a run that never finished: the next
`begin` marks it interrupted, and `status` tells a live run from a dead one by
the repository's lock.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from bot.errors import BotError
from bot.store.records import DONE, INTERRUPTED, RUNNING, Run, run_columns, run_from_columns
from bot.store.sqlite import SqliteFile

__all__ = ["DONE", "INTERRUPTED", "KEEP_PER_REPO", "RUNNING", "Run", "RunLog"]

log = logging.getLogger(__name__)

T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY, repo TEXT NOT NULL, started_at TEXT NOT NULL, seconds REAL NOT NULL,
    trigger TEXT NOT NULL, commit_sha TEXT NOT NULL, files_added INTEGER NOT NULL,
    files_changed INTEGER NOT NULL, files_removed INTEGER NOT NULL, chunks_added INTEGER NOT NULL,
    chunks_removed INTEGER NOT NULL, embedded_inputs INTEGER NOT NULL,
    embedding_tokens INTEGER NOT NULL, error TEXT NOT NULL,
    embedding_tokens_saved INTEGER NOT NULL DEFAULT 0,
    state TEXT NOT NULL DEFAULT 'done',
    secret_files INTEGER NOT NULL DEFAULT 0, key_blocks INTEGER NOT NULL DEFAULT 0,
    redactions INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS runs_repo ON runs(repo, id);
CREATE TABLE IF NOT EXISTS next_runs (repo TEXT PRIMARY KEY, at TEXT NOT NULL);
"""
KEEP_PER_REPO = 200
_COLUMNS = (
    "repo, started_at, seconds, trigger, commit_sha, files_added, files_changed, files_removed, "
    "chunks_added, chunks_removed, embedded_inputs, embedding_tokens, error, "
    "embedding_tokens_saved, state, secret_files, key_blocks, redactions"
)
_INSERT = f"INSERT INTO runs ({_COLUMNS}) VALUES ({', '.join('?' * 18)})"
_UPDATE = (
    f"UPDATE runs SET {', '.join(f'{c.strip()} = ?' for c in _COLUMNS.split(','))} WHERE id = ?"
)


def _to_row(run: Run) -> tuple[object, ...]:
    return run_columns(run, run.started_at.isoformat())


def _from_row(row: Sequence[object]) -> Run:
    return run_from_columns(row, datetime.fromisoformat(str(row[1])))


def _prepare(db: sqlite3.Connection) -> None:
    db.executescript(_SCHEMA)
    columns = {row[1] for row in db.execute("PRAGMA table_info(runs)")}
    if "embedding_tokens_saved" not in columns:  # logs written before it existed
        db.execute("ALTER TABLE runs ADD COLUMN embedding_tokens_saved INTEGER NOT NULL DEFAULT 0")
    if "state" not in columns:  # logs written before runs were recorded at their start
        db.execute("ALTER TABLE runs ADD COLUMN state TEXT NOT NULL DEFAULT 'done'")
    for counted in ("secret_files", "key_blocks", "redactions"):  # before secrets were counted
        if counted not in columns:
            db.execute(f"ALTER TABLE runs ADD COLUMN {counted} INTEGER NOT NULL DEFAULT 0")


class RunLog:
    """Reads raise StoreError; writes are best-effort (logged), so a run log that cannot be
    written (a full disk) never hides the error of the run it was recording."""

    def __init__(self, path: Path) -> None:
        self._file = SqliteFile(path, "run log", _prepare, synchronous="FULL")

    def _write(self, op: Callable[[sqlite3.Connection], T]) -> T | None:
        """`op` in one transaction; None (logged) when it could not be written."""
        try:
            return self._file.write(op)
        except BotError as exc:
            log.warning("the run log was not updated: %s", exc.user_message)
            log.info("run log write failed: %s", exc.detail)
            return None

    def begin(self, repo: str, started: datetime, trigger: str) -> int | None:
        """Record a run that starts now; call it holding the repository's lock, so any run
        of `repo` still marked running was cut short. Returns the id for `finish`, or None
        when the log could not be written (logged; the run goes on)."""

        def insert(db: sqlite3.Connection) -> int:
            db.execute(
                "UPDATE runs SET state = ? WHERE repo = ? AND state = ?",
                (INTERRUPTED, repo, RUNNING),
            )
            row = _to_row(Run(repo, started, 0.0, trigger, state=RUNNING))
            run_id = int(db.execute(_INSERT, row).lastrowid or 0)
            _trim(db, repo)
            return run_id

        return self._write(insert)

    def finish(self, run_id: int | None, run: Run) -> None:
        """Complete the run `begin` returned `run_id` for with its outcome (or, when `begin`
        could not write, record it whole)."""
        if run_id is None:
            self.record(run)
            return
        self._write(lambda db: db.execute(_UPDATE, (*_to_row(run), run_id)))

    def record(self, run: Run) -> None:
        """Record a whole run at once."""

        def insert(db: sqlite3.Connection) -> None:
            db.execute(_INSERT, _to_row(run))
            _trim(db, run.repo)

        self._write(insert)

    def last(self, repo: str) -> Run | None:
        return self._latest(repo, "")

    def last_ok(self, repo: str) -> Run | None:
        """The latest run of `repo` that finished without an error."""
        return self._latest(repo, f"AND state = '{DONE}' AND error = ''")

    def _latest(self, repo: str, condition: str) -> Run | None:
        row = self._file.run(
            lambda db: db.execute(
                f"SELECT {_COLUMNS} FROM runs WHERE repo = ? {condition} ORDER BY id DESC LIMIT 1",
                (repo,),
            ).fetchone()
        )
        return None if row is None else _from_row(row)

    def embedding_totals(self, repo: str) -> tuple[int, int]:
        """(tokens sent, tokens saved by the cache) over the runs kept for `repo`."""
        row = self._file.run(
            lambda db: db.execute(
                "SELECT COALESCE(SUM(embedding_tokens), 0), "
                "COALESCE(SUM(embedding_tokens_saved), 0) FROM runs WHERE repo = ?",
                (repo,),
            ).fetchone()
        )
        return int(row[0]), int(row[1])

    def set_next_run(self, repo: str, at: datetime | None) -> None:
        if at is None:
            self._write(lambda db: db.execute("DELETE FROM next_runs WHERE repo = ?", (repo,)))
            return
        when = at.astimezone(UTC).isoformat()
        self._write(
            lambda db: db.execute(
                "INSERT INTO next_runs VALUES (?, ?) ON CONFLICT(repo) DO UPDATE SET at = "
                "excluded.at",
                (repo, when),
            )
        )

    def next_run(self, repo: str) -> datetime | None:
        row = self._file.run(
            lambda db: db.execute("SELECT at FROM next_runs WHERE repo = ?", (repo,)).fetchone()
        )
        return datetime.fromisoformat(row[0]) if row else None

    def forget(self, repo: str) -> int:
        """Drop every run of `repo` and its next run; how many runs went. Unlike the other
        writes this one raises StoreError: `forget` must know whether it finished."""

        def delete(db: sqlite3.Connection) -> int:
            db.execute("DELETE FROM next_runs WHERE repo = ?", (repo,))
            return int(db.execute("DELETE FROM runs WHERE repo = ?", (repo,)).rowcount)

        return self._file.write(delete)

    def close(self) -> None:
        self._file.close()  # idempotent


def _trim(db: sqlite3.Connection, repo: str) -> None:
    db.execute(
        "DELETE FROM runs WHERE repo = ? AND id NOT IN "
        "(SELECT id FROM runs WHERE repo = ? ORDER BY id DESC LIMIT ?)",
        (repo, repo, KEEP_PER_REPO),
    )
