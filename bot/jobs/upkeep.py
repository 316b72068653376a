"""Everything that changes what is indexed, as the Core offers it: ingests, re-index jobs,
and forgetting a repository.

    upkeep = Upkeep(settings, index, stores, lambda: config, reload, embedder=..., symbols=...)
    upkeep.line.index_repo("../shop")                          # `codecite index`
    upkeep.reindex("shop", scope, trigger="slack command", by="U1", inline=False)
    upkeep.forget("shop", scope, syntax)                       # asks first
    upkeep.forget("shop yes", scope, syntax).later             # the report, when done

The Core decides who may (admins) and what they see (scope); this module does the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future

from bot.commands import FORGET, CommandResult, Syntax, confirm_line, forget_target
from bot.config import FileConfig, Settings
from bot.errors import ConfigError, QuestionError
from bot.index.base import Index
from bot.jobs.forget import Forgetter
from bot.jobs.line import IngestLine, Notice, Outcome, then
from bot.jobs.requests import ReindexRequests
from bot.jobs.runner import JobRunner
from bot.llm.embeddings import Embedder
from bot.reports import forget_preview_text, forgot_text, reindex_text
from bot.store.base import StoreSet, SymbolTable


class Upkeep:
    def __init__(
        self,
        settings: Settings,
        index: Index,
        stores: StoreSet,
        config: Callable[[], FileConfig],
        reload: Callable[[], FileConfig],
        *,
        embedder: Embedder | None,
        symbols: SymbolTable | None,
    ) -> None:
        self._settings = settings
        self._stores = stores
        self._config = config
        self._reload = reload
        self.line = IngestLine(
            settings,
            index,
            stores.runs,
            stores.locks,
            config,
            embedder=embedder,
            symbols=symbols,
            history=stores.history,
        )
        self.requests = ReindexRequests(lambda: stores.jobs, poll=settings.job_poll_seconds)
        self._forgetter = Forgetter(index, symbols, stores, clones=settings.clones_dir)

    def reindex(
        self,
        repo: str | None,
        scope: frozenset[str] | None,
        *,
        trigger: str,
        by: str,
        inline: bool,
        on_wait: Notice | None = None,
    ) -> Future[str]:
        """Jobs for the scheduler's runner, or (`inline`) an ingest here (`on_wait` hears what
        it waits for); the future's result is the report. ScopeError at once for a repository
        unknown or outside `scope`."""
        targets = self.line.in_scope(repo, scope)
        if inline:
            ran = self.line.submit(targets, trigger=trigger, inline=True, on_wait=on_wait)
            return then(ran, reindex_text)
        return self.requests.request(targets, trigger=trigger, requested_by=by)

    def queue_reindex(self, name: str, *, trigger: str) -> bool:
        """A quick re-ingest job for a configured repository (a push); False if unknown."""
        if self._config().repo(name) is None:
            return False
        self.requests.enqueue(name, trigger=trigger, quick=True)
        return True

    def reindex_repo(
        self, name: str, *, trigger: str, quick: bool, wait: float | None
    ) -> Future[list[Outcome]]:
        """One known repository on the line now (scheduled runs); unknown: no outcomes."""
        targets = self.line.targets([name])
        return self.line.submit(targets, trigger=trigger, quick=quick, wait=wait)

    def job_runner(self) -> JobRunner:
        """A runner of the shared job table on this process's ingest line; start and stop it."""
        lease, poll = self._settings.job_lease_seconds, self._settings.job_poll_seconds
        runner = JobRunner(self._stores.jobs, self.line, lease=lease, poll=poll)
        return self.requests.attach(runner)

    def forget(self, argument: str, scope: frozenset[str] | None, syntax: Syntax) -> CommandResult:
        """`shop`: what would go, and the line that confirms (refusals raise at once);
        `shop yes`: checked again, then removed on the ingest line (`later`: the report)."""
        repo, confirmed = forget_target(argument)
        if not repo:
            usage = syntax.command(FORGET)
            raise QuestionError(f"Name the repository to forget: `{usage}`.")
        preview = self._forgetter.preview(repo, scope, self._configured())
        if confirmed:
            return CommandResult("", later=self.line.call(lambda: self.forget_now(repo)))
        text = forget_preview_text(preview, syntax.confirmation(repo))
        return CommandResult(text, ephemeral=True, confirm=confirm_line(repo))

    def forget_now(self, repo: str) -> str:
        """Remove every trace of `repo` in this thread, unasked; the report."""
        return forgot_text(self._forgetter.forget(repo))

    def _configured(self) -> set[str]:
        """Listed in codecite.toml as applied, or as the file says now (the scheduler's next
        read): either way the scheduler would index a forgotten repository again."""
        try:
            fresh = self._reload().repos
        except ConfigError:
            fresh = ()  # an invalid file is not applied: what is applied decides
        return {repo.name for repo in (*self._config().repos, *fresh)}

    def close(self) -> None:
        """Finish the ingests and forgets already accepted, then stop waiting for jobs."""
        self.requests.close()
        self.line.shutdown()
