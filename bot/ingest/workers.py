"""Where ingest's per-file work runs: this process alone, or it and worker processes.

`prepare_all` hands batches of files (`bot.ingest.prepare`) to
`bot.runtime.parallel.ordered_map`, which keeps results in input order and at
most a few batches per worker in flight, so memory stays flat and the index
comes out byte-identical to a one-process ingest. N processes means N - 1
workers beside the ingesting process, which works too. A small change set (an
incremental re-ingest of a few files) never pays for starting a worker.

A worker that dies (killed, or crashed by a file that breaks the parser) stops
the ingest with `WorkerFailed` before anything is written, so the previous
index keeps answering; its batch is not retried here, since a file that
crashes a parser would take this process down with it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import replace
from functools import partial

from bot.errors import SourceError
from bot.ingest.prepare import Batch, FileJob, PreparedFile, prepare_batch
from bot.runtime.parallel import WorkerDied, ordered_map

MAX_PROCESSES = 64
BATCH_CHARS = 512 << 10  # text per batch: small enough to spread, large enough to amortise
PARALLEL_ABOVE_CHARS = 4 << 20  # less text than this is prepared here, without workers


class WorkerFailed(SourceError):
    user_message = (
        "Indexing stopped: a worker process died while preparing the files; the previous"
        " index is unchanged (CODECITE_INGEST_WORKERS=1 indexes in one process)."
    )


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def process_count(configured: int | None) -> int:
    """How many processes prepare files: the setting, else one per core this process may
    use; one inside a daemonic process (it may not start children)."""
    import multiprocessing  # here: a command that never ingests does not load it

    if multiprocessing.current_process().daemon:
        return 1
    wanted = configured if configured is not None else available_cores()
    return max(1, min(wanted, MAX_PROCESSES))


def prepare_all(jobs: Iterable[FileJob], like: Batch, *, processes: int) -> Iterator[PreparedFile]:
    """Each job prepared as a file of `like` (its repository, commit and options), in
    order; see the module doc for where."""
    try:
        yield from ordered_map(
            partial(_prepare_jobs, like),
            jobs,
            weight=_job_size,
            batch_weight=BATCH_CHARS,
            parallel_above=PARALLEL_ABOVE_CHARS,
            workers=processes - 1,
            redo_broken=False,
        )
    except WorkerDied as exc:
        first = exc.batch[0].path if exc.batch else "?"
        raise WorkerFailed(detail=f"a worker died on a batch from {first}") from exc


def _prepare_jobs(like: Batch, jobs: list[FileJob]) -> list[PreparedFile]:
    return prepare_batch(replace(like, files=jobs))


def _job_size(job: FileJob) -> int:
    return len(job.text)
