"""The Core's ingest and upkeep commands: re-ingest now or as a job, rebuild a damaged index
file, forget a repository, prepare a remote index. A part of the facade kept beside it (as
`bot.history_commands` is), so `bot/core.py` stays the questions and the commands; the work
itself is `bot.jobs.upkeep`'s, built on first use."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from datetime import datetime
from typing import TYPE_CHECKING

from bot import wiring
from bot.context import Context
from bot.errors import PermissionDenied
from bot.index.base import Index, Recovering
from bot.index.setup import prepare_index
from bot.llm.embeddings import Embedder
from bot.runtime.once import Once
from bot.store.base import RunRecords

if TYPE_CHECKING:
    from bot.jobs import IngestLine, JobRunner, Notice, Outcome
    from bot.jobs.upkeep import Upkeep


class Maintenance:
    """Mixed into `Core`, which provides `index`, `embedder`, `runs`, `_upkeep` and
    `scope_for`."""

    index: Index
    embedder: Embedder | None
    runs: RunRecords
    _upkeep: Once[Upkeep]

    def scope_for(self, ctx: Context) -> frozenset[str] | None:
        raise NotImplementedError  # the Core's

    @property
    def _ingest(self) -> IngestLine:
        return self._upkeep.get().line

    def reindex(
        self, repo: str | None, ctx: Context, *, inline: bool = False, on_wait: Notice | None = None
    ) -> Future[str]:
        """Re-ingest a repository in ctx's scope (or all); refusals raise at once; the result is
        the runs' report. A job per repository is recorded for the scheduler's runner; `inline`
        ingests here (`codecite reindex`, interruptible; `on_wait` hears what it waits for)."""
        if not ctx.is_admin:
            raise PermissionDenied()
        if isinstance(self.index, Recovering):  # "0 changed" only of a file that is whole
            self.index.verify()  # damaged: set aside, and its repositories join the targets
        scope, trigger = self.scope_for(ctx), f"{ctx.platform} command"
        return self._upkeep.get().reindex(
            repo, scope, trigger=trigger, by=ctx.user, inline=inline, on_wait=on_wait
        )

    def queue_reindex(self, name: str, *, trigger: str) -> bool:
        """Record a quick re-ingest job for a configured repository (a push); False if unknown."""
        return self._upkeep.get().queue_reindex(name, trigger=trigger)

    def job_runner(self) -> JobRunner:
        """A runner of the shared job table on this process's ingest line; start and stop it."""
        return self._upkeep.get().job_runner()

    def reindex_repo(
        self, name: str, *, trigger: str, quick: bool = False, wait: float | None = None
    ) -> Future[list[Outcome]]:
        """Re-ingest a known repository now on the ingest line (the scheduler's runs); else []."""
        return self._upkeep.get().reindex_repo(name, trigger=trigger, quick=quick, wait=wait)

    def ingest_in_children(self) -> Callable[[], None]:
        """Ingests run in child processes from now on (`bot.jobs.offload`); the result cancels."""
        return self._ingest.in_children(wiring.ingest_parts)

    def awaits_rebuild(self) -> bool:
        """The index file was damaged and set aside: its repositories await a rebuild."""
        return isinstance(self.index, Recovering) and bool(self.index.rebuilds())

    def rebuild_index(self, *, inline: bool = False) -> Future[list[Outcome]] | None:
        """Index again what a damaged index file held, on the ingest line (None: nothing)."""
        return self._ingest.rebuild(inline=inline)

    def rebuild_when_damaged(self) -> None:
        """This process ingests (`serve`, `schedule`): rebuild what the index awaits now,
        and whenever the index finds itself damaged later."""
        if isinstance(self.index, Recovering):
            self.index.on_damage = self._rebuild_later
            self.rebuild_index()

    def _rebuild_later(self) -> None:
        self.rebuild_index()

    def note_next_run(self, repo: str, at: datetime | None) -> None:
        """When the scheduler will next re-ingest `repo` (shown by `status`)."""
        self.runs.set_next_run(repo, at)

    def forget_repo(self, name: str) -> str:
        """Remove every trace of a repository now, unasked (the scheduler, when it leaves
        codecite.toml), in this thread: the report (`bot.jobs.forget`)."""
        return self._upkeep.get().forget_now(name)

    def prepare_index(self, *, rebuild_state: bool = False) -> str:
        """Create (or check) a remote index and say what it is; "" for the local index."""
        dimension = self.embedder.dimensions if self.embedder is not None else None
        return prepare_index(self.index, dimension, rebuild_state=rebuild_state)
