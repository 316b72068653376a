"""The ingest line: every ingest of this process runs on it, locked and logged.

    line = IngestLine(...)
    future = line.submit([Target("shop", url, "main")], trigger="schedule", quick=True)
    outcomes = future.result()   # [("shop", IngestReport | BotError)]

Ingests run on the line's own threads, never on an answer worker, so a long
reindex cannot hold up questions; with `in_children` (`codecite serve` and `schedule`) the ingest
itself runs in a child process at lower priority (`bot.jobs.offload`), so it does not
hold this interpreter's GIL either, while the lock and the run log stay here. Each
repository is ingested under its cross-process lock (`stores.locks`) and every run
is written to the run log, whatever triggered it. `index_repo` is the same locked,
logged ingest for callers that wait for it themselves (`codecite index`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TypeVar

from bot.config import FileConfig, RepoConfig, Settings
from bot.errors import BotError, ScopeError
from bot.index.base import Index, Rebuild, Recovering
from bot.ingest.history import HistoryOptions
from bot.ingest.pipeline import IngestOptions, Ingestor, IngestReport, Progress
from bot.ingest.sources import default_name
from bot.jobs.offload import Build, Cancelled, ChildIngests
from bot.llm.embeddings import Embedder
from bot.runtime import metrics
from bot.store.base import HistoryRecords, IngestLocks, RunRecords, SymbolTable
from bot.store.locks import RepositoryBusy
from bot.store.records import RUNNING
from bot.store.runs import Run

log = logging.getLogger(__name__)

WORKERS = 4  # repositories re-ingested at once in one process (each ingest is parallel too)

Outcome = tuple[str, IngestReport | BotError]
T = TypeVar("T")
Notice = Callable[[str], None]  # hears, in a sentence, what an ingest waits for


@dataclass(frozen=True, slots=True)
class Target:
    """A repository to re-ingest: its name, where it comes from, the branch ("" = default)."""

    name: str
    location: str
    branch: str = ""


class IngestLine:
    """Runs ingests under their repository's lock, on its own threads, and logs every run."""

    def __init__(
        self,
        settings: Settings,
        index: Index,
        runs: RunRecords,
        locks: IngestLocks,
        config: Callable[[], FileConfig],
        *,
        embedder: Embedder | None = None,
        symbols: SymbolTable | None = None,
        workers: int = WORKERS,
        history: HistoryRecords | None = None,
    ) -> None:
        self._settings = settings
        self._index = index
        self._runs = runs
        self._locks = locks
        self._config = config
        self._embedder = embedder
        self._symbols = symbols
        self._history = history
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="codecite-ingest")
        self._children: ChildIngests | None = None

    def in_children(self, build: Build) -> Callable[[], None]:
        """Run each ingest from now on in a child process that opens its stores with
        `build`; the function returned cancels those under way (`stop_children`)."""
        self._children = ChildIngests(self._settings, build=build)
        return self.stop_children

    def targets(self, names: Sequence[str] | None = None) -> list[Target]:
        """Configured repositories (and those only recorded in the index), by name."""
        configured = {r.name: Target(r.name, r.location, r.branch) for r in self._config().repos}
        recorded = {s.name: Target(s.name, s.source, s.branch) for s in self._index.repo_states()}
        awaited = {r.name: Target(r.name, r.source, r.branch) for r in self.rebuilds()}
        known = {**awaited, **recorded, **configured}
        if names is None:
            return [known[name] for name in sorted(known)]
        return [known[name] for name in names if name in known]

    def rebuilds(self) -> list[Rebuild]:
        """What a damaged index file, set aside, awaits (`Recovering`); [] for others."""
        return self._index.rebuilds() if isinstance(self._index, Recovering) else []

    def rebuild(self, *, inline: bool = False) -> Future[list[Outcome]] | None:
        """Index again what a damaged index file held (None: nothing awaited)."""
        names = [r.name for r in self.rebuilds()]
        if not names:
            return None
        log.warning("rebuilding the index from the repositories: %s", ", ".join(names))
        return self.submit(self.targets(names), trigger="rebuild", inline=inline)

    def in_scope(self, repo: str | None, scope: frozenset[str] | None) -> list[Target]:
        """The targets of a `reindex` of `repo` (None: all) seen from `scope` (None: all);
        ScopeError for a repository that is unknown or outside the scope."""
        targets = [t for t in self.targets() if scope is None or t.name in scope]
        if repo is None:
            return targets
        chosen = [t for t in targets if t.name == repo]
        if not chosen:
            raise ScopeError(f"There is no repository named {repo!r} here.")
        return chosen

    def submit(
        self,
        targets: Sequence[Target],
        *,
        trigger: str,
        quick: bool = False,
        wait: float | None = None,
        inline: bool = False,
        on_wait: Notice | None = None,
    ) -> Future[list[Outcome]]:
        """Re-ingest `targets` in order on the line; each outcome is a report or a BotError.

        A BotError of one repository does not stop the others; any other exception
        (a bug) fails the future. `wait`, `quick` and `on_wait` are those of `index_repo`.
        `inline`: run in the calling thread instead, for a caller that waits anyway
        and must stay interruptible (Ctrl-C at the terminal stops the ingest).
        """
        if not inline:
            return self._pool.submit(self._run, tuple(targets), trigger, quick, wait, on_wait)
        done: Future[list[Outcome]] = Future()
        done.set_result(self._run(tuple(targets), trigger, quick, wait, on_wait))
        return done

    def call(self, work: Callable[[], T]) -> Future[T]:
        """Run other repository maintenance (`forget`) on the line's threads."""
        return self._pool.submit(work)

    def _run(
        self,
        targets: tuple[Target, ...],
        trigger: str,
        quick: bool,
        wait: float | None,
        on_wait: Notice | None = None,
    ) -> list[Outcome]:
        outcomes: list[Outcome] = []
        for target in targets:
            try:
                report = self.index_repo(
                    target.location,
                    name=target.name,
                    branch=target.branch or None,
                    trigger=trigger,
                    wait=wait,
                    quick=quick,
                    on_wait=on_wait,
                    known_only=True,
                )
            except BotError as exc:
                reason = exc.detail or exc.user_message
                if isinstance(exc, RepositoryBusy):
                    metrics.ingested(trigger, "busy", 0.0)
                    log.info("ingest of %s skipped: %s", target.name, reason)
                else:
                    log.warning("ingest of %s failed: %s", target.name, reason)
                outcomes.append((target.name, exc))
            else:
                outcomes.append((target.name, report))
        return outcomes

    def index_repo(
        self,
        location: str,
        *,
        name: str | None = None,
        branch: str | None = None,
        progress: Progress | None = None,
        trigger: str = "cli",
        wait: float | None = None,
        quick: bool = False,
        on_wait: Notice | None = None,
        known_only: bool = False,
        history: HistoryOptions | None = None,
    ) -> IngestReport:
        """Ingest what changed, holding the repository's lock; every run is logged for status.

        `wait` bounds how long to wait for another ingest of the same repository
        (None: as long as it takes; 0: give up at once with RepositoryBusy); `on_wait`
        hears what it waits for before it does. `quick` skips all work when the source's
        commit equals the indexed one. `known_only`: a re-ingest, which must not bring back
        a repository forgotten while it waited for the lock (no longer configured nor indexed).
        """
        name = name or default_name(location)
        if wait != 0 and self._locks.busy(name):
            notice = self._waiting_for(name)
            log.info("%s", notice)
            if on_wait is not None:
                on_wait(notice)
        with self._locks.hold(name, wait=wait):
            if known_only and not self.targets([name]):
                raise BotError(
                    f"{name} was forgotten before this run started; nothing was indexed."
                )
            started = datetime.now(UTC)
            clock = time.monotonic()
            run_id = self._runs.begin(name, started, trigger)  # best-effort, like every log write
            try:
                report = self._ingest(location, name, branch, progress, quick, history)
            except BotError as exc:
                seconds = time.monotonic() - clock
                self._runs.finish(run_id, Run.failed(name, started, seconds, trigger, exc))
                metrics.ingested(trigger, _outcome(exc), seconds)
                raise
            except Exception:
                # A bug, not bad input: status must still show that the run failed.
                failure = BotError("The ingest failed unexpectedly; see the log.")
                seconds = time.monotonic() - clock
                self._runs.finish(run_id, Run.failed(name, started, seconds, trigger, failure))
                metrics.ingested(trigger, "failed", seconds)
                raise
            self._runs.finish(run_id, Run.from_report(report, started, trigger))
            self._counted(report, trigger, time.monotonic() - clock)
        return report

    def _counted(self, report: IngestReport, trigger: str, seconds: float) -> None:
        """The run in the metrics; an ingest in a child process embedded there, so its
        tokens are counted here, from its report."""
        metrics.ingested(trigger, "ok", seconds)
        if self._children is not None and self._embedder is not None:
            metrics.model_tokens("embed", self._embedder.model, embedding=report.embedding_tokens)

    def _waiting_for(self, name: str) -> str:
        """What an ingest of `name` waits for: the run holding its lock, as the log knows it."""
        run = self._runs.last(name)
        if run is None or run.state != RUNNING:  # another process that logged nothing yet
            return f"waiting for another ingest of {name} to finish"
        seconds = max(0, int((datetime.now(UTC) - run.started_at).total_seconds()))
        return (
            f"waiting for another ingest of {name} to finish "
            f"(started {seconds} s ago by {run.trigger})"
        )

    def _ingest(
        self,
        location: str,
        name: str,
        branch: str | None,
        progress: Progress | None,
        quick: bool,
        history: HistoryOptions | None = None,
    ) -> IngestReport:
        """`history`: the horizon of this ingest (`codecite index --history-*`), else the
        repository's codecite.toml keys."""
        configured = self._config().repo(name)
        settings = self._settings
        options = IngestOptions(
            name=name,
            branch=branch or (configured.branch if configured else None) or None,
            include=configured.include if configured else (),
            exclude=configured.exclude if configured else (),
            token=options_token(settings) or None,
            max_file_bytes=settings.max_file_bytes,
            workers=settings.ingest_workers,
            history=replace(
                history or history_options(configured),
                github_token=options_token(settings),
                github_api_url=settings.github_api_url,
            ),
        )
        children = self._children
        if children is not None:
            return children.ingest(location, options, progress, quick)
        ingestor = Ingestor(
            self._index,
            home=settings.home,
            embedder=self._embedder,
            symbols=self._symbols,
            history=self._history,
        )
        return ingestor.ingest(location, options, progress, quick=quick)

    def stop_children(self) -> None:
        """Cancel the ingests under way in child processes, and run no more there: each
        fails as `Cancelled` and the index stays as it was."""
        if self._children is not None:
            self._children.cancel()

    def shutdown(self) -> None:
        """Finish the jobs already accepted (they were promised; those in child processes
        are cancelled first, see `stop_children`), then stop the threads."""
        self.stop_children()
        self._pool.shutdown(wait=True)


def _outcome(exc: BotError) -> str:
    return "cancelled" if isinstance(exc, Cancelled) else "failed"


def then(future: Future[list[Outcome]], render: Callable[[list[Outcome]], str]) -> Future[str]:
    """A future of `render(result)`, failing as `future` fails."""
    out: Future[str] = Future()

    def done(source: Future[list[Outcome]]) -> None:
        try:
            out.set_result(render(source.result()))
        except BaseException as exc:  # noqa: BLE001 - handed on to whoever waits
            out.set_exception(exc)

    future.add_done_callback(done)
    return out


def history_options(configured: RepoConfig | None) -> HistoryOptions:
    """A repository's history horizon from its codecite.toml table (defaults without one)."""
    if configured is None:
        return HistoryOptions()
    return HistoryOptions(configured.history, configured.history_commits, configured.history_days)


def options_token(settings: Settings) -> str:
    return settings.github_token.get_secret_value() if settings.github_token else ""
