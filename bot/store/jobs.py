"""Re-ingest jobs (`IngestJobs`): the value both tables keep, and the SQLite table
(`CODECITE_HOME/jobs.sqlite`) shared by every process on one data directory.

    job_id = jobs.enqueue("shop", "webhook", "github")   # a queued job (or the one queued)
    job = jobs.claim("host:123", lease=60)                # the oldest runnable job, or None
    jobs.heartbeat(job.id, "host:123")                    # while it runs
    jobs.finish(job.id, "host:123", ok=True, text="• shop: ...")
    jobs.results([job_id])                                # what waiters read
    jobs.cancel("shop", "• shop: ...")                    # its queued jobs fail (forget)

A job is queued, then running (owned by one runner, which heartbeats it), then done
or failed with the text its asker is shown. A running job whose heartbeat is older
than its lease lost its runner (killed, machine gone) and is runnable again; after
MAX_ATTEMPTS such claims it fails with GAVE_UP instead, so one repository that kills
its runner cannot loop forever. A repository has at most one queued job: a second
request joins it (one ingest serves both). Claims are BEGIN IMMEDIATE transactions
(the file's write lock), so two processes never claim one job. Finished jobs are
pruned after KEEP_SECONDS. A damaged file is set aside like the others: queued jobs
are lost, and the next push or `reindex` queues them again.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.store.sqlite import SqliteFile

FILENAME = "jobs.sqlite"
QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
MAX_ATTEMPTS = 3  # claims of one job (each after its runner died) before it fails
KEEP_SECONDS = 7 * 86400  # finished jobs kept for waiters and `status`, then pruned


@dataclass(frozen=True, slots=True)
class Job:
    """One re-ingest request as the job table keeps it."""

    id: int
    repo: str
    trigger: str  # how it was asked for: webhook, "slack command", ...
    requested_by: str
    quick: bool  # skip all work when the source's commit is the indexed one
    state: str  # QUEUED, RUNNING, DONE or FAILED
    attempts: int  # claims so far
    text: str  # the result for whoever asked, once finished

    @property
    def finished(self) -> bool:
        return self.state in (DONE, FAILED)


def gave_up(repo: str, attempts: int) -> str:
    """The result of a job whose runner died at every one of its attempts."""
    return (
        f"• {repo}: failed: the re-index stopped without finishing {attempts} times "
        "(its process died each time), so codecite gave up on it; see the scheduler's log."
    )


_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, repo TEXT NOT NULL, trigger TEXT NOT NULL,
    requested_by TEXT NOT NULL, quick INTEGER NOT NULL, state TEXT NOT NULL,
    owner TEXT NOT NULL DEFAULT '', attempts INTEGER NOT NULL DEFAULT 0,
    lease REAL NOT NULL DEFAULT 0, heartbeat_at REAL NOT NULL DEFAULT 0,
    created_at REAL NOT NULL, finished_at REAL, text TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX IF NOT EXISTS jobs_one_queued ON jobs (repo) WHERE state = 'queued';
CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs (state, id);
"""
COLUMNS = "id, repo, trigger, requested_by, quick, state, attempts, text"
_STALE = "state = 'running' AND heartbeat_at + lease < :now"


def _prepare(db: sqlite3.Connection) -> None:
    db.executescript(_SCHEMA)


def job_from_row(row: Sequence[object]) -> Job:
    """A Job from the columns both tables select (`COLUMNS`, in that order)."""
    id_, repo, trigger, by, quick, state, attempts, text = row
    return Job(
        int(str(id_)),
        str(repo),
        str(trigger),
        str(by),
        bool(quick),
        str(state),
        int(str(attempts)),
        str(text),
    )


class SqliteJobs:
    """The job table in one SQLite file; `clock` (seconds) is injectable for tests."""

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._file = SqliteFile(path, "job table", _prepare, autocommit=True, timeout=15)

    def enqueue(
        self, repo: str, trigger: str, requested_by: str = "", *, quick: bool = False
    ) -> int:
        now = self._clock()

        def add(db: sqlite3.Connection) -> int:
            db.execute("DELETE FROM jobs WHERE finished_at < ?", (now - KEEP_SECONDS,))
            queued = db.execute(
                "SELECT id FROM jobs WHERE repo = ? AND state = 'queued'", (repo,)
            ).fetchone()
            if queued is not None:  # one ingest, started later, serves both requests
                db.execute("UPDATE jobs SET quick = quick AND ? WHERE id = ?", (quick, queued[0]))
                return int(queued[0])
            cursor = db.execute(
                "INSERT INTO jobs (repo, trigger, requested_by, quick, state, created_at) "
                "VALUES (?, ?, ?, ?, 'queued', ?)",
                (repo, trigger, requested_by, quick, now),
            )
            return int(cursor.lastrowid or 0)

        return self._file.write(add)

    def claim(self, owner: str, lease: float) -> Job | None:
        if lease <= 0:
            raise ValueError("lease must be positive")
        now = self._clock()
        return self._file.write(lambda db: _claim(db, owner, lease, now))

    def heartbeat(self, job_id: int, owner: str) -> bool:
        now = self._clock()
        return self._file.write(
            lambda db: (
                db.execute(
                    "UPDATE jobs SET heartbeat_at = ? "
                    "WHERE id = ? AND owner = ? AND state = 'running'",
                    (now, job_id, owner),
                ).rowcount
                == 1
            )
        )

    def finish(self, job_id: int, owner: str, *, ok: bool, text: str) -> bool:
        now = self._clock()
        return self._file.write(
            lambda db: (
                db.execute(
                    "UPDATE jobs SET state = ?, text = ?, finished_at = ? "
                    "WHERE id = ? AND owner = ? AND state = 'running'",
                    (DONE if ok else FAILED, text, now, job_id, owner),
                ).rowcount
                == 1
            )
        )

    def cancel(self, repo: str, text: str) -> int:
        now = self._clock()
        return self._file.write(
            lambda db: int(
                db.execute(
                    "UPDATE jobs SET state = 'failed', text = ?, finished_at = ? "
                    "WHERE repo = ? AND state = 'queued'",
                    (text, now, repo),
                ).rowcount
            )
        )

    def queued(self) -> int:
        return self._file.run(
            lambda db: int(
                db.execute("SELECT count(*) FROM jobs WHERE state = 'queued'").fetchone()[0]
            )
        )

    def results(self, ids: Sequence[int]) -> dict[int, Job]:
        wanted = sorted(set(ids))
        if not wanted:
            return {}
        marks = ",".join("?" * len(wanted))
        rows = self._file.run(
            lambda db: db.execute(
                f"SELECT {COLUMNS} FROM jobs WHERE id IN ({marks})", wanted
            ).fetchall()
        )
        return {job.id: job for job in map(job_from_row, rows)}

    def close(self) -> None:
        self._file.close()  # idempotent


def _claim(db: sqlite3.Connection, owner: str, lease: float, now: float) -> Job | None:
    at = {"now": now, "max": MAX_ATTEMPTS}
    for job_id, repo, attempts in db.execute(
        f"SELECT id, repo, attempts FROM jobs WHERE {_STALE} AND attempts >= :max", at
    ).fetchall():
        db.execute(
            "UPDATE jobs SET state = 'failed', text = ?, finished_at = ? WHERE id = ?",
            (gave_up(str(repo), int(attempts)), now, job_id),
        )
    row = db.execute(
        f"SELECT id FROM jobs AS j WHERE (state = 'queued' OR ({_STALE})) "
        # a repository another runner is ingesting waits here, not in a runner
        "AND NOT EXISTS (SELECT 1 FROM jobs AS r WHERE r.repo = j.repo AND r.id != j.id "
        "AND r.state = 'running' AND r.heartbeat_at + r.lease >= :now) ORDER BY id LIMIT 1",
        at,
    ).fetchone()
    if row is None:
        return None
    db.execute(
        "UPDATE jobs SET state = 'running', owner = ?, attempts = attempts + 1, lease = ?, "
        "heartbeat_at = ? WHERE id = ?",
        (owner, lease, now, row[0]),
    )
    claimed = db.execute(f"SELECT {COLUMNS} FROM jobs WHERE id = ?", (row[0],)).fetchone()
    return job_from_row(claimed)
