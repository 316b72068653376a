"""Re-ingest configured repositories on a schedule (APScheduler 3.11).

One job per repository from codecite.toml: an interval ("15m", "2h") or a
crontab line, with jitter, coalescing (missed runs collapse into one) and at
most one instance. These interval runs ingest directly in this process, on the
Core's ingest line; pushes and chat reindexes arrive as recorded jobs, run by the job
runner beside this scheduler (`bot.jobs.runner`, started by `adapters.serve`). A
cross-process lock (`stores.locks`) keeps a scheduled run, a job, and a CLI reindex
of one repository from overlapping, on one machine or several.
A sync job re-reads codecite.toml so added and removed repositories are
picked up on the next run; a removed one is forgotten (`Core.forget_repo`: index,
symbols, run log, queued jobs, clone), again at each sync until that succeeds.

Every job's first run is due at once, so at boot (`install`, then `start`)
configured repositories the index holds nothing of are indexed right away, in the
background, without waiting for the first interval: that run is recorded and
logged as "boot". Repositories already indexed get a full check at once (the rules
of codecite.toml as they are now apply, whether or not the commit moved), as do
repositories added to codecite.toml later; later runs are quick checks. Being the
job's own run, it keeps the job's guarantees (one at a time, missed runs coalesced).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_EXECUTED, EVENT_JOB_MISSED, JobEvent
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.schedulers.base import BaseScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from bot.config import FileConfig, RepoConfig
from bot.core import Core
from bot.errors import BotError, ConfigError
from bot.store.locks import RepositoryBusy

if TYPE_CHECKING:  # the ingest pipeline loads tree-sitter; the web process never ingests
    from bot.ingest.pipeline import IngestReport

log = logging.getLogger(__name__)

_INTERVAL = re.compile(r"^\s*(\d+)\s*(s|m|h|d)\s*$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}
_CRON_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat", "sun")
SYNC_JOB = "codecite:sync-config"
JOB_PREFIX = "codecite:ingest:"


def make_trigger(spec: str, *, jitter: int, timezone: tzinfo) -> IntervalTrigger | CronTrigger:
    """ "15m" / "2h" / "30s" / "1d" -> interval; five crontab fields -> cron."""
    match = _INTERVAL.match(spec)
    if match:
        amount = int(match.group(1))
        if amount <= 0:
            raise ConfigError(f"Schedule {spec!r} must be a positive interval.")
        unit = _UNITS[match.group(2)]
        return IntervalTrigger(**{unit: amount}, jitter=jitter or None, timezone=timezone)
    fields = spec.split()
    if len(fields) != 5:
        raise ConfigError(
            f"Schedule {spec!r} is neither an interval like '15m' nor a crontab line."
        )
    minute, hour, day, month, weekday = fields
    try:
        return CronTrigger(
            minute=minute,
            hour=hour,
            day=day,
            month=month,
            day_of_week=_crontab_weekdays(weekday),
            jitter=jitter or None,
            timezone=timezone,
        )
    except ValueError as exc:
        raise ConfigError(f"Schedule {spec!r} is not a valid crontab line.") from exc


def _crontab_weekdays(field: str) -> str:
    """Crontab numbers weekdays from Sunday=0; APScheduler 3 from Monday=0. Use names."""
    return re.sub(r"\d+", lambda m: _CRON_DAYS[int(m.group()) % 8], field)


def zone(name: str) -> tzinfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(f"Unknown timezone {name!r} in [schedule].") from exc


class IngestScheduler:
    """Owns the APScheduler jobs; works with a background scheduler or any given one."""

    def __init__(self, core: Core, *, scheduler: BaseScheduler | None = None) -> None:
        self.core = core
        config = core.config.schedule
        self._tz = zone(config.timezone)
        self.scheduler = scheduler or BackgroundScheduler(timezone=self._tz)
        self.scheduler.add_listener(
            self._on_event, EVENT_JOB_EXECUTED | EVENT_JOB_ERROR | EVENT_JOB_MISSED
        )
        self._configured: dict[str, RepoConfig] = {}
        # Repositories whose next run may not be skipped because the commit has not moved:
        # their rules are new to this scheduler (at start, or changed since).
        self._full_run: set[str] = set()
        self._boot: set[str] = set()  # never indexed at install: their first run is "boot"
        self._unforgotten: set[str] = set()  # removed from codecite.toml, forget to retry

    # -- jobs --------------------------------------------------------------------------------

    def install(self) -> None:
        """Create one job per configured repository, plus the config sync job."""
        self._boot = set(self.core.never_indexed())
        self.apply_config(self.core.config)
        self.scheduler.add_job(
            self.sync_config,
            IntervalTrigger(minutes=1, timezone=self._tz),
            id=SYNC_JOB,
            name="re-read codecite.toml",
            replace_existing=True,
            coalesce=True,
            max_instances=1,
        )

    def apply_config(self, config: FileConfig) -> None:
        wanted = {r.name: r for r in config.repos}
        for name in sorted(set(self._configured) - set(wanted)):
            self._remove(name)
        for name, repo in wanted.items():
            previous = self._configured.get(name)
            if previous != repo or self.scheduler.get_job(JOB_PREFIX + name) is None:
                self._add(repo, config)
        self._configured = dict(wanted)
        self.core.use_config(config)

    def sync_config(self) -> None:
        for name in sorted(self._unforgotten - set(self._configured)):
            self._forget(name)
        try:
            config = self.core.load_config()
        except ConfigError as exc:
            log.error("codecite.toml not applied: %s", exc.user_message)
            return
        if config != self.core.config:
            log.info("codecite.toml changed; applying")
            self.apply_config(config)

    def _add(self, repo: RepoConfig, config: FileConfig) -> None:
        # The first run under these rules is a full one: include/exclude rules written while
        # no scheduler ran (or changed now) apply at once, not when the remote head moves.
        # Unchanged files are still not read again; only the file list is compared.
        self._full_run.add(repo.name)
        spec = repo.schedule or config.schedule.interval
        trigger = make_trigger(spec, jitter=config.schedule.jitter_seconds, timezone=self._tz)
        self.scheduler.add_job(
            self.run_repo,
            trigger,
            args=(repo.name, "schedule"),
            id=JOB_PREFIX + repo.name,
            name=f"ingest {repo.name}",
            replace_existing=True,
            coalesce=True,
            max_instances=1,
            misfire_grace_time=None,  # a late run still runs (once, thanks to coalescing)
            next_run_time=datetime.now(self._tz),  # index new repositories right away
        )
        log.info("scheduled %s: %s", repo.name, spec)

    def _remove(self, name: str) -> None:
        job = self.scheduler.get_job(JOB_PREFIX + name)
        if job is not None:
            job.remove()
        self.core.note_next_run(name, None)
        self._forget(name)

    def _forget(self, name: str) -> None:
        """It left the configuration: forget it, or try again at the next sync."""
        try:
            report = self.core.forget_repo(name)
        except BotError as exc:  # e.g. a long ingest of it still holds its lock
            self._unforgotten.add(name)
            log.warning(
                "%s left codecite.toml but is not forgotten yet (%s); trying again in a minute",
                name,
                exc.user_message,
            )
            return
        self._unforgotten.discard(name)
        log.info("%s left codecite.toml and was unscheduled. %s", name, report)

    # -- running -----------------------------------------------------------------------------

    def run_repo(self, name: str, trigger: str) -> IngestReport | None:
        """One run: ingest what changed; failures are logged and recorded, never raised.

        The run goes through `Core.reindex_repo`, on the same ingest line as the jobs
        this process's runner claims; a repository being ingested is skipped.
        """
        if name not in self._configured:
            log.warning("no configured repository named %s", name)
            return None
        quick = name not in self._full_run
        if name in self._boot:
            self._boot.discard(name)
            trigger = "boot"
            log.info("boot: indexing %s (configured, never indexed)", name)
        runs = self.core.reindex_repo(name, trigger=trigger, wait=0.0, quick=quick).result()
        for _, outcome in runs:
            if isinstance(outcome, RepositoryBusy):
                log.info("skipped %s: an ingest of it is already running", name)
            elif not isinstance(outcome, BotError):  # failures were logged by the ingest line
                self._full_run.discard(name)
                return outcome
        return None

    def trigger_now(self, name: str) -> bool:
        """Run a repository's scheduled job as soon as possible (pushes record jobs instead:
        `bot.jobs`). False if unknown."""
        job = self.scheduler.get_job(JOB_PREFIX + name)
        if job is None:
            return False
        job.modify(next_run_time=datetime.now(self._tz))
        return True

    def repo_for_remote(self, clone_urls: set[str]) -> str | None:
        """The configured repository whose URL is one of the pushed repository's URLs."""
        return repo_for_remote(self._configured.values(), clone_urls)

    def _on_event(self, event: JobEvent) -> None:
        job_id = getattr(event, "job_id", "")
        if not job_id.startswith(JOB_PREFIX):
            return
        name = job_id[len(JOB_PREFIX) :]
        if event.code == EVENT_JOB_ERROR:
            exc: Any = getattr(event, "exception", None)
            log.error("scheduled ingest of %s crashed", name, exc_info=exc)
        job = self.scheduler.get_job(job_id)
        self.core.note_next_run(name, job.next_run_time if job is not None else None)

    def start(self, *, paused: bool = False) -> None:
        self.scheduler.start(paused=paused)
        for name in self._configured:
            job = self.scheduler.get_job(JOB_PREFIX + name)
            self.core.note_next_run(name, job.next_run_time if job is not None else None)

    def shutdown(self) -> None:
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)


def repo_for_remote(repos: Iterable[RepoConfig], clone_urls: set[str]) -> str | None:
    """The repository (of `repos`) whose URL is one of a pushed repository's URLs."""
    normal = {_normal_url(u) for u in clone_urls if u}
    for repo in repos:
        if repo.url and _normal_url(repo.url) in normal:
            return repo.name
    return None


def _normal_url(url: str) -> str:
    """Compare git URLs loosely: scheme, userinfo, `.git` and case do not matter."""
    url = url.strip().lower().removesuffix("/").removesuffix(".git")
    url = re.sub(r"^[a-z+]+://", "", url)
    url = re.sub(r"^[^@/]+@", "", url)
    return url.replace(":", "/", 1) if "/" in url and ":" in url.split("/", 1)[0] else url
