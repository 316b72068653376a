"""A log of ingest runs per repository, for `status`: last run, its outcome, the next run.

Kept in the data directory so a standalone scheduler and the serving process
(or the CLI) see the same history.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bot.errors import BotError
from bot.ingest.pipeline import IngestReport
from bot.sqlite_files import SqliteFile

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY, repo TEXT NOT NULL, started_at TEXT NOT NULL, seconds REAL NOT NULL,
    trigger TEXT NOT NULL, commit_sha TEXT NOT NULL, files_added INTEGER NOT NULL,
    files_changed INTEGER NOT NULL, files_removed INTEGER NOT NULL, chunks_added INTEGER NOT NULL,
    chunks_removed INTEGER NOT NULL, embedded_inputs INTEGER NOT NULL,
    embedding_tokens INTEGER NOT NULL, error TEXT NOT NULL,
    embedding_tokens_saved INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS runs_repo ON runs(repo, id);
CREATE TABLE IF NOT EXISTS next_runs (repo TEXT PRIMARY KEY, at TEXT NOT NULL);
"""
KEEP_PER_REPO = 200


@dataclass(frozen=True, slots=True)
class Run:
    repo: str
    started_at: datetime
    seconds: float
    trigger: str  # schedule, webhook, command, cli
    commit: str = ""
    files_added: int = 0
    files_changed: int = 0
    files_removed: int = 0
    chunks_added: int = 0
    chunks_removed: int = 0
    embedded_inputs: int = 0
    embedding_tokens: int = 0
    error: str = ""  # the user-facing sentence, "" when the run succeeded
    embedding_tokens_saved: int = 0

    @property
    def ok(self) -> bool:
        return not self.error

    @classmethod
    def from_report(cls, report: IngestReport, started: datetime, trigger: str) -> Run:
        return cls(
            repo=report.repo,
            started_at=started,
            seconds=report.seconds,
            trigger=trigger,
            commit=report.commit,
            files_added=report.files_added,
            files_changed=report.files_changed,
            files_removed=report.files_removed,
            chunks_added=report.chunks_added,
            chunks_removed=report.chunks_removed,
            embedded_inputs=report.embedded_inputs,
            embedding_tokens=report.embedding_tokens,
            embedding_tokens_saved=report.embedding_tokens_saved,
        )

    @classmethod
    def failed(
        cls, repo: str, started: datetime, seconds: float, trigger: str, exc: BotError
    ) -> Run:
        return cls(repo, started, seconds, trigger, error=exc.user_message)


def _prepare(db: sqlite3.Connection) -> None:
    db.executescript(_SCHEMA)
    columns = {row[1] for row in db.execute("PRAGMA table_info(runs)")}
    if "embedding_tokens_saved" not in columns:  # logs written before it existed
        db.execute("ALTER TABLE runs ADD COLUMN embedding_tokens_saved INTEGER NOT NULL DEFAULT 0")


class RunLog:
    """Reads raise StoreError; writes are best-effort (logged), so a run log that cannot be
    written (a full disk) never hides the error of the run it was recording."""

    def __init__(self, path: Path) -> None:
        self._file = SqliteFile(path, "run log", _prepare, synchronous="FULL")

    def _write(self, op: Callable[[sqlite3.Connection], object]) -> None:
        def in_transaction(db: sqlite3.Connection) -> None:
            with db:
                op(db)

        try:
            self._file.run(in_transaction)
        except BotError as exc:
            log.warning("the run log was not updated: %s", exc.user_message)
            log.info("run log write failed: %s", exc.detail)

    def record(self, run: Run) -> None:
        row = (
            run.repo,
            run.started_at.isoformat(),
            run.seconds,
            run.trigger,
            run.commit,
            run.files_added,
            run.files_changed,
            run.files_removed,
            run.chunks_added,
            run.chunks_removed,
            run.embedded_inputs,
            run.embedding_tokens,
            run.error,
            run.embedding_tokens_saved,
        )

        def insert(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT INTO runs (repo, started_at, seconds, trigger, commit_sha, files_added, "
                "files_changed, files_removed, chunks_added, chunks_removed, embedded_inputs, "
                "embedding_tokens, error, embedding_tokens_saved) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )
            db.execute(
                "DELETE FROM runs WHERE repo = ? AND id NOT IN "
                "(SELECT id FROM runs WHERE repo = ? ORDER BY id DESC LIMIT ?)",
                (run.repo, run.repo, KEEP_PER_REPO),
            )

        self._write(insert)

    def last(self, repo: str) -> Run | None:
        row = self._file.run(
            lambda db: db.execute(
                "SELECT repo, started_at, seconds, trigger, commit_sha, files_added, "
                "files_changed, files_removed, chunks_added, chunks_removed, embedded_inputs, "
                "embedding_tokens, error FROM runs WHERE repo = ? ORDER BY id DESC LIMIT 1",
                (repo,),
            ).fetchone()
        )
        if row is None:
            return None
        counts = [int(v) for v in row[5:12]]
        return Run(
            repo=str(row[0]),
            started_at=datetime.fromisoformat(row[1]),
            seconds=float(row[2]),
            trigger=str(row[3]),
            commit=str(row[4]),
            files_added=counts[0],
            files_changed=counts[1],
            files_removed=counts[2],
            chunks_added=counts[3],
            chunks_removed=counts[4],
            embedded_inputs=counts[5],
            embedding_tokens=counts[6],
            error=str(row[12]),
        )

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

    def close(self) -> None:
        self._file.close()
