"""A log of ingest runs per repository, for `status`: last run, its outcome, the next run.

Kept in the data directory so a standalone scheduler and the serving process
(or the CLI) see the same history. A run is written when it starts
(`begin`, under the repository's lock) and completed when it ends (`finish`),
so a process killed mid-ingest leaves a run that never finished: the next
`begin` marks it interrupted, and `status` tells a live run from a dead one by
the repository's lock.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bot.errors import BotError, StoreError
from bot.ingest.pipeline import IngestReport
from bot.sqlite_files import open_or_set_aside

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY, repo TEXT NOT NULL, started_at TEXT NOT NULL, seconds REAL NOT NULL,
    trigger TEXT NOT NULL, commit_sha TEXT NOT NULL, files_added INTEGER NOT NULL,
    files_changed INTEGER NOT NULL, files_removed INTEGER NOT NULL, chunks_added INTEGER NOT NULL,
    chunks_removed INTEGER NOT NULL, embedded_inputs INTEGER NOT NULL,
    embedding_tokens INTEGER NOT NULL, error TEXT NOT NULL,
    embedding_tokens_saved INTEGER NOT NULL DEFAULT 0,
    state TEXT NOT NULL DEFAULT 'done'
);
CREATE INDEX IF NOT EXISTS runs_repo ON runs(repo, id);
CREATE TABLE IF NOT EXISTS next_runs (repo TEXT PRIMARY KEY, at TEXT NOT NULL);
"""
KEEP_PER_REPO = 200
RUNNING, DONE, INTERRUPTED = "running", "done", "interrupted"
_COLUMNS = (
    "repo, started_at, seconds, trigger, commit_sha, files_added, files_changed, files_removed, "
    "chunks_added, chunks_removed, embedded_inputs, embedding_tokens, error, "
    "embedding_tokens_saved, state"
)


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
    state: str = DONE  # RUNNING until it ends; INTERRUPTED when its process died

    @property
    def ok(self) -> bool:
        return self.state == DONE and not self.error

    def _row(self) -> tuple[object, ...]:
        return (
            self.repo,
            self.started_at.isoformat(),
            self.seconds,
            self.trigger,
            self.commit,
            self.files_added,
            self.files_changed,
            self.files_removed,
            self.chunks_added,
            self.chunks_removed,
            self.embedded_inputs,
            self.embedding_tokens,
            self.error,
            self.embedding_tokens_saved,
            self.state,
        )

    @classmethod
    def _from_row(cls, row: Sequence[object]) -> Run:
        counts = [int(str(v)) for v in row[5:12]]
        return cls(
            repo=str(row[0]),
            started_at=datetime.fromisoformat(str(row[1])),
            seconds=float(str(row[2])),
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
            embedding_tokens_saved=int(str(row[13])),
            state=str(row[14]),
        )

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


def _open(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, check_same_thread=False, timeout=10)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.executescript(_SCHEMA)
        columns = {row[1] for row in db.execute("PRAGMA table_info(runs)")}
        if "embedding_tokens_saved" not in columns:  # logs written before it existed
            db.execute(
                "ALTER TABLE runs ADD COLUMN embedding_tokens_saved INTEGER NOT NULL DEFAULT 0"
            )
        if "state" not in columns:  # logs written before runs were recorded at their start
            db.execute("ALTER TABLE runs ADD COLUMN state TEXT NOT NULL DEFAULT 'done'")
    except sqlite3.Error:
        db.close()
        raise
    return db


class RunLog:
    def __init__(self, path: Path) -> None:
        self._lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = open_or_set_aside(path, _open, "run log")
        except (OSError, sqlite3.Error) as exc:
            raise StoreError("The run log could not be opened.", detail=str(exc)) from exc

    def begin(self, repo: str, started: datetime, trigger: str) -> int:
        """Record a run that starts now; call it holding the repository's lock, so any run
        of `repo` still marked running was cut short. Returns the id for `finish`."""
        placeholders = ", ".join("?" * 15)
        with self._lock, self._db:
            self._db.execute(
                "UPDATE runs SET state = ? WHERE repo = ? AND state = ?",
                (INTERRUPTED, repo, RUNNING),
            )
            cursor = self._db.execute(
                f"INSERT INTO runs ({_COLUMNS}) VALUES ({placeholders})",
                Run(repo, started, 0.0, trigger, state=RUNNING)._row(),
            )
            self._trim(repo)
        return int(cursor.lastrowid or 0)

    def finish(self, run_id: int, run: Run) -> None:
        """Complete the run `begin` returned `run_id` for with its outcome."""
        assignments = ", ".join(f"{c.strip()} = ?" for c in _COLUMNS.split(","))
        with self._lock, self._db:
            self._db.execute(f"UPDATE runs SET {assignments} WHERE id = ?", (*run._row(), run_id))

    def record(self, run: Run) -> None:
        """Record a whole run at once (one that never began, such as a refused one)."""
        placeholders = ", ".join("?" * 15)
        with self._lock, self._db:
            self._db.execute(f"INSERT INTO runs ({_COLUMNS}) VALUES ({placeholders})", run._row())
            self._trim(repo=run.repo)

    def _trim(self, repo: str) -> None:
        self._db.execute(
            "DELETE FROM runs WHERE repo = ? AND id NOT IN "
            "(SELECT id FROM runs WHERE repo = ? ORDER BY id DESC LIMIT ?)",
            (repo, repo, KEEP_PER_REPO),
        )

    def last(self, repo: str) -> Run | None:
        return self._latest(repo, "")

    def last_ok(self, repo: str) -> Run | None:
        """The latest run of `repo` that finished without an error."""
        return self._latest(repo, f"AND state = '{DONE}' AND error = ''")

    def _latest(self, repo: str, condition: str) -> Run | None:
        with self._lock:
            row = self._db.execute(
                f"SELECT {_COLUMNS} FROM runs WHERE repo = ? {condition} ORDER BY id DESC LIMIT 1",
                (repo,),
            ).fetchone()
        return None if row is None else Run._from_row(row)

    def embedding_totals(self, repo: str) -> tuple[int, int]:
        """(tokens sent, tokens saved by the cache) over the runs kept for `repo`."""
        with self._lock:
            row = self._db.execute(
                "SELECT COALESCE(SUM(embedding_tokens), 0), "
                "COALESCE(SUM(embedding_tokens_saved), 0) FROM runs WHERE repo = ?",
                (repo,),
            ).fetchone()
        return int(row[0]), int(row[1])

    def set_next_run(self, repo: str, at: datetime | None) -> None:
        with self._lock, self._db:
            if at is None:
                self._db.execute("DELETE FROM next_runs WHERE repo = ?", (repo,))
            else:
                self._db.execute(
                    "INSERT INTO next_runs VALUES (?, ?) ON CONFLICT(repo) DO UPDATE SET at = "
                    "excluded.at",
                    (repo, at.astimezone(UTC).isoformat()),
                )

    def next_run(self, repo: str) -> datetime | None:
        with self._lock:
            row = self._db.execute("SELECT at FROM next_runs WHERE repo = ?", (repo,)).fetchone()
        return datetime.fromisoformat(row[0]) if row else None

    def close(self) -> None:
        with self._lock:
            self._db.close()
