"""Re-ingest work: one ingest line per process, and one job path between processes.

    line = IngestLine(...)                       # bot.jobs.line: locked, logged ingests
    later = requests.request(targets, ...)       # bot.jobs.requests: record jobs, wait
    runner = JobRunner(stores.jobs, line, ...)   # bot.jobs.runner: claim and run them
    Forgetter(...).forget("shop")                # bot.jobs.forget: every trace of it goes
    Upkeep(...)                                  # bot.jobs.upkeep: all of it, for the Core

Who ingests what:
- chat `reindex` and push webhooks record a job in the shared job table
  (`stores.jobs`: SQLite in the data directory, or PostgreSQL); the process that asks
  never ingests;
- the scheduler's process runs a `JobRunner`, which claims jobs and runs them on its
  ingest line; the chat's Future resolves from the job's recorded result;
- scheduled interval runs, the boot pass and the terminal (`codecite index`,
  `codecite reindex`) ingest directly on their own process's line.
Every ingest, whichever way it came, holds the repository's cross-process lock and
is written to the run log; so does forgetting a repository (it runs on the line too),
and a re-ingest that waited for that lock does not bring a forgotten repository back.
"""

from bot.jobs.line import WORKERS, IngestLine, Notice, Outcome, Target, then
from bot.jobs.requests import ReindexRequests
from bot.jobs.runner import JobRunner

__all__ = [
    "WORKERS",
    "IngestLine",
    "JobRunner",
    "Notice",
    "Outcome",
    "ReindexRequests",
    "Target",
    "then",
]
