"""Re-ingest jobs in PostgreSQL (`IngestJobs`), shared by the web processes that queue them
and the schedulers, on any machine, that run them.

A claim is one statement: the oldest runnable row, locked `FOR UPDATE SKIP LOCKED`,
becomes running, so concurrent claimers each take a different job and never wait
for each other. Leases and heartbeats are judged by the server's clock, so runners
on machines whose clocks differ agree on which runner is dead. One queued job per
repository is kept by a partial unique index: a second request joins it
(`ON CONFLICT ... DO UPDATE`). See `bot.store.jobs` for the life of a job.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot.store.jobs import (
    COLUMNS,
    DONE,
    FAILED,
    KEEP_SECONDS,
    MAX_ATTEMPTS,
    Job,
    gave_up,
    job_from_row,
)
from bot.store.postgres.connection import Database

if TYPE_CHECKING:
    import psycopg

    Conn = psycopg.Connection[tuple[object, ...]]

_EXPIRED = "heartbeat_at + make_interval(secs => lease_seconds) < clock_timestamp()"
_ENQUEUE = (
    "INSERT INTO ingest_jobs (repo, trigger, requested_by, quick, state, created_at) "
    "VALUES (%s, %s, %s, %s, 'queued', clock_timestamp()) "
    "ON CONFLICT (repo) WHERE state = 'queued' "
    "DO UPDATE SET quick = ingest_jobs.quick AND excluded.quick RETURNING id"
)
_PRUNE = "DELETE FROM ingest_jobs WHERE finished_at < clock_timestamp() - make_interval(secs => %s)"
_DEAD = (
    f"SELECT id, repo, attempts FROM ingest_jobs WHERE state = 'running' AND {_EXPIRED} "
    "AND attempts >= %s FOR UPDATE SKIP LOCKED"
)
_CLAIM = f"""
UPDATE ingest_jobs SET state = 'running', owner = %(owner)s, attempts = attempts + 1,
    lease_seconds = %(lease)s, heartbeat_at = clock_timestamp()
WHERE id = (
    SELECT j.id FROM ingest_jobs AS j
    WHERE (j.state = 'queued' OR (j.state = 'running' AND j.{_EXPIRED}
           AND j.attempts < %(max)s))
      AND NOT EXISTS (
          SELECT 1 FROM ingest_jobs AS r WHERE r.repo = j.repo AND r.id <> j.id
          AND r.state = 'running' AND NOT (r.{_EXPIRED}))
    ORDER BY j.id LIMIT 1 FOR UPDATE OF j SKIP LOCKED)
RETURNING {COLUMNS}
"""
_HEARTBEAT = (
    "UPDATE ingest_jobs SET heartbeat_at = clock_timestamp() "
    "WHERE id = %s AND owner = %s AND state = 'running'"
)
_CANCEL = (
    "UPDATE ingest_jobs SET state = 'failed', text = %s, finished_at = clock_timestamp() "
    "WHERE repo = %s AND state = 'queued'"
)
_FINISH = (
    "UPDATE ingest_jobs SET state = %s, text = %s, finished_at = clock_timestamp() "
    "WHERE id = %s AND owner = %s AND state = 'running'"
)


class PostgresJobs:
    def __init__(self, database: Database) -> None:
        self._db = database

    def enqueue(
        self, repo: str, trigger: str, requested_by: str = "", *, quick: bool = False
    ) -> int:
        def add(conn: Conn) -> int:
            conn.execute(_PRUNE, (float(KEEP_SECONDS),))
            row = conn.execute(_ENQUEUE, (repo, trigger, requested_by, quick)).fetchone()
            assert row is not None  # RETURNING gives the inserted or the joined row
            return int(str(row[0]))

        return self._db.run(add)

    def claim(self, owner: str, lease: float) -> Job | None:
        if lease <= 0:
            raise ValueError("lease must be positive")

        def take(conn: Conn) -> Job | None:
            for job_id, repo, attempts in conn.execute(_DEAD, (MAX_ATTEMPTS,)).fetchall():
                conn.execute(
                    "UPDATE ingest_jobs SET state = %s, text = %s, "
                    "finished_at = clock_timestamp() WHERE id = %s",
                    (FAILED, gave_up(str(repo), int(str(attempts))), job_id),
                )
            params = {"owner": owner, "lease": float(lease), "max": MAX_ATTEMPTS}
            row = conn.execute(_CLAIM, params).fetchone()
            return job_from_row(row) if row is not None else None

        return self._db.run(take)

    def heartbeat(self, job_id: int, owner: str) -> bool:
        return self._db.run(lambda conn: conn.execute(_HEARTBEAT, (job_id, owner)).rowcount == 1)

    def finish(self, job_id: int, owner: str, *, ok: bool, text: str) -> bool:
        state = DONE if ok else FAILED
        return self._db.run(
            lambda conn: conn.execute(_FINISH, (state, text, job_id, owner)).rowcount == 1
        )

    def cancel(self, repo: str, text: str) -> int:
        return self._db.run(lambda conn: int(conn.execute(_CANCEL, (text, repo)).rowcount))

    def queued(self) -> int:
        row = self._db.read(
            lambda conn: conn.execute(
                "SELECT count(*) FROM ingest_jobs WHERE state = 'queued'"
            ).fetchone()
        )
        return int(str(row[0])) if row is not None else 0

    def results(self, ids: Sequence[int]) -> dict[int, Job]:
        wanted = sorted(set(ids))
        if not wanted:
            return {}
        rows = self._db.run(
            lambda conn: conn.execute(
                f"SELECT {COLUMNS} FROM ingest_jobs WHERE id = ANY(%s)",
                (wanted,),
            ).fetchall()
        )
        return {job.id: job for job in map(job_from_row, rows)}

    def close(self) -> None:
        """The pool belongs to the store set (closed with it)."""
