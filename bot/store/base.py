"""The storage contract: the records codecite keeps besides its search index.

Each kind of record is one small protocol; `Stores` hands them out. Today one
implementation stands behind every part (SQLite files and lock files in the
data directory, `bot.store.local`); a shared-database one can stand beside it,
passing the same contract tests (`tests/bot/store/`). So the contract speaks
in values, never in SQL or file paths: bulk writes are one call (`put_many`,
`apply`, `commit`), each call is one transaction inside the implementation,
and a lock is a method (`locks.hold(repo)`), not a file.

Every implementation shares these rules:
- a damaged backing file (or table) is set aside and started afresh, with one
  sentence for the user (`bot.store.sqlite.notices`); the call that met it
  either runs again on the fresh store or fails with StoreError;
- failures are `StoreError` (a full disk `DiskFullError`), never a raw driver error;
- `close()` may be called more than once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Protocol

from bot.models import Answer, FileEntry, RepoState
from bot.runtime.limits import Quota
from bot.store.history_records import (
    CommitRecord,
    FileLines,
    HistoryHead,
    HistoryUpdate,
    PullRequest,
    TagRecord,
)
from bot.store.jobs import Job
from bot.store.records import ChunkRow, CorpusStats, Counts, FeedbackRow, FileRow, Run
from bot.symbols.model import (
    FileFacts,
    FileSymbols,
    RankedSymbol,
    SymbolAlias,
    SymbolDef,
    SymbolRef,
)
from bot.symbols.packed import PackedSymbols


class Closable(Protocol):
    def close(self) -> None: ...


class RunRecords(Closable, Protocol):
    """The ingest run log, for `status`. Writes are best-effort (logged, never raised)."""

    def begin(self, repo: str, started: datetime, trigger: str) -> int | None: ...
    def finish(self, run_id: int | None, run: Run) -> None: ...
    def record(self, run: Run) -> None: ...
    def last(self, repo: str) -> Run | None: ...
    def last_ok(self, repo: str) -> Run | None: ...
    def embedding_totals(self, repo: str) -> tuple[int, int]: ...
    def set_next_run(self, repo: str, at: datetime | None) -> None: ...
    def next_run(self, repo: str) -> datetime | None: ...
    def forget(self, repo: str) -> int:
        """Drop `repo`'s runs and next run (how many runs); raises StoreError, unlike writes."""
        ...


class FeedbackRecords(Closable, Protocol):
    """Answers on record and the votes people gave them."""

    def record_answer(
        self, *, platform: str, channel: str, asker: str, question: str, answer: Answer
    ) -> str: ...
    def record_vote(self, answer_id: str, voter: str, vote: int) -> bool: ...
    def list(self, limit: int = 100) -> list[FeedbackRow]: ...


class EventClaims(Closable, Protocol):
    """First-come claims on incoming events, shared by every process."""

    def claim(self, *keys: str, ttl: float, owner: str = "") -> bool:
        """True for exactly one caller per key until its claim is `ttl` seconds old; all
        keys or none."""
        ...


class IngestLocks(Closable, Protocol):
    """One ingest per repository at a time, across threads and processes."""

    def hold(self, repo: str, *, wait: float | None = None) -> AbstractContextManager[None]:
        """Hold `repo`'s lock for a `with` body; `wait` seconds at most (None: forever,
        0: not at all), then RepositoryBusy."""
        ...

    def busy(self, repo: str) -> bool:
        """Whether someone holds `repo`'s lock now (never makes them wait)."""
        ...


class SymbolTable(Closable, Protocol):
    """Where each name is defined and used, per repository."""

    def blobs(self, repo: str) -> dict[str, str]: ...
    def apply(
        self,
        repo: str,
        files: Sequence[tuple[str, str, FileSymbols | PackedSymbols]],
        removed: Sequence[str] = (),
        *,
        commit: str | None = None,
    ) -> None: ...
    def remove_repo(self, repo: str) -> None: ...
    def repos(self) -> list[str]: ...
    def commits(self) -> dict[str, str]: ...
    def definitions(
        self, name: str, *, repos: frozenset[str] | None, limit: int = 20
    ) -> list[SymbolDef]: ...
    def aliases(
        self, name: str, *, repos: frozenset[str] | None, limit: int = 50
    ) -> list[SymbolAlias]: ...
    def references(
        self,
        name: str,
        *,
        repos: frozenset[str] | None,
        calls_only: bool = False,
        limit: int = 50,
    ) -> list[SymbolRef]: ...
    def reference_count(
        self, name: str, *, repos: frozenset[str] | None, calls_only: bool = False
    ) -> int: ...
    def top_symbols(self, repo: str, *, limit: int = 30) -> list[RankedSymbol]: ...
    def file_facts(self, repo: str, paths: Iterable[str]) -> dict[str, FileFacts]: ...
    def paths(self, repo: str) -> list[str]: ...
    def stats(self, repo: str | None = None) -> tuple[int, int]: ...


class VectorCache(Closable, Protocol):
    """Embedding vectors by content key. Only an optimisation: failures are misses."""

    def get_many(self, keys: Iterable[str]) -> dict[str, list[float]]: ...
    def put_many(self, items: Mapping[str, Sequence[float]]) -> None: ...
    def __len__(self) -> int: ...


class CommandHashes(Closable, Protocol):
    """The hash of each command list last registered with a platform, per application."""

    def get(self, application: str) -> dict[str, str]:
        """target -> hash registered for `application` ({} when none, or another app's)."""
        ...

    def set(self, application: str, hashes: Mapping[str, str]) -> None:
        """Replace what is kept with `hashes` for `application` (best-effort)."""
        ...


class PineconeStateRecords(Closable, Protocol):
    """What a Pinecone index keeps beside Pinecone: repository states, manifests, token
    dimensions for IDF, and the journal of ids an apply is about to write."""

    def repo_states(self) -> list[RepoState]: ...
    def manifest(self, repo: str) -> dict[str, FileEntry]: ...
    def file_chunk_ids(self, repo: str, path: str) -> list[str]: ...
    def repo_chunks(self, repo: str) -> dict[str, str]: ...
    def pending(self, repo: str) -> list[str]: ...
    def corpus_stats(
        self, level: str, terms: Sequence[int], repos: frozenset[str] | None
    ) -> CorpusStats: ...
    def counts(self) -> Counts: ...
    def record_count(self) -> int: ...
    def journal(self, repo: str, ids: Iterable[str]) -> None: ...
    def commit(
        self,
        state: RepoState,
        *,
        chunks: Sequence[ChunkRow],
        deleted: Iterable[str],
        files: Sequence[FileRow],
        removed_paths: Iterable[str],
    ) -> None: ...
    def hide_repo(self, repo: str) -> None:
        """Drop `repo`'s state (no longer listed) but keep its rows, for `remove_repo` to
        find what to delete in Pinecone."""
        ...

    def remove_repo(self, repo: str) -> None: ...
    def replace_all(
        self, states: Sequence[RepoState], files: Sequence[FileRow], chunks: Sequence[ChunkRow]
    ) -> None: ...
    def rebuild_wanted(self) -> bool:
        """Whether the state was started afresh (set aside) and awaits `replace_all`."""
        ...


class QuestionQuota(Quota, Closable, Protocol):
    """The rate limits' counts (`take`, `usage`: see `bot.runtime.limits.Quota`), shared by
    every process on the store. `take` checks the per-user and per-channel sliding windows
    and the UTC day's count (derived from `now`, epoch seconds from the caller's clock) and
    records the question only when all pass, in one transaction; idle rows are pruned."""


class IngestJobs(Closable, Protocol):
    """Re-ingest jobs shared by every process: web processes enqueue, runners claim.

    `enqueue` joins the repository's queued job when there is one. `claim` takes the
    oldest runnable job (queued, or running with a heartbeat older than its lease) for
    `owner`, never the same one twice at once; `heartbeat` and `finish` are refused
    (False) once the job is no longer `owner`'s. `cancel` fails `repo`'s queued jobs with
    `text` (what their askers are shown) and says how many; running jobs are left alone.
    """

    def enqueue(
        self, repo: str, trigger: str, requested_by: str = "", *, quick: bool = False
    ) -> int: ...
    def claim(self, owner: str, lease: float) -> Job | None: ...
    def heartbeat(self, job_id: int, owner: str) -> bool: ...
    def finish(self, job_id: int, owner: str, *, ok: bool, text: str) -> bool: ...
    def cancel(self, repo: str, text: str) -> int: ...
    def results(self, ids: Sequence[int]) -> dict[int, Job]: ...
    def queued(self) -> int:
        """How many jobs wait for a runner now (the metrics' queue depth)."""
        ...


class HistoryRecords(Closable, Protocol):
    """Each repository's recorded commits and line attribution (`bot.store.history_records`);
    `apply` is one transaction, so readers see the old history or the whole new one."""

    def head(self, repo: str) -> HistoryHead | None: ...
    def last_seq(self, repo: str) -> int: ...
    def apply(self, update: HistoryUpdate) -> None: ...
    def commits(self, repo: str) -> list[CommitRecord]: ...
    def file_lines(self, repo: str, paths: Iterable[str]) -> dict[str, FileLines]: ...
    def tags(self, repo: str) -> list[TagRecord]: ...
    def pull_requests(self, repo: str, numbers: Iterable[int]) -> dict[int, PullRequest]: ...
    def put_pull_requests(self, repo: str, prs: Iterable[PullRequest]) -> None: ...
    def remove_repo(self, repo: str) -> None: ...
    def repos(self) -> list[str]: ...


class StoreSet(Closable, Protocol):
    """Every part, opened on first use and closed together."""

    @property
    def runs(self) -> RunRecords: ...
    @property
    def feedback(self) -> FeedbackRecords: ...
    @property
    def claims(self) -> EventClaims: ...
    @property
    def locks(self) -> IngestLocks: ...
    @property
    def symbols(self) -> SymbolTable: ...
    @property
    def embedding_cache(self) -> VectorCache: ...
    @property
    def pinecone_state(self) -> PineconeStateRecords: ...
    @property
    def quota(self) -> QuestionQuota: ...
    @property
    def jobs(self) -> IngestJobs: ...
    @property
    def history(self) -> HistoryRecords: ...
    def command_hashes(self, name: str, what: str = "") -> CommandHashes:
        """The platform's store named `name` (`what` names it in sentences to users)."""
        ...

    def ping(self) -> None:
        """Raise StoreError unless the stores can be reached now (cheap: for `/readyz`)."""
        ...
