"""Re-ingest jobs in tests: a job runner beside a Core (what the scheduler's process runs).

with running_jobs(core):
    core.run_command("reindex shop", admin).final_text(timeout=60)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from bot.core import Core
from bot.jobs import JobRunner


@contextmanager
def running_jobs(core: Core) -> Iterator[JobRunner]:
    """`core`'s job runner, started for the body of the `with` and stopped after it."""
    runner = core.job_runner()
    runner.start()
    try:
        yield runner
    finally:
        runner.stop(timeout=60)
