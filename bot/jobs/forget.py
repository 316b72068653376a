"""Forgetting a repository: every trace of it, in an order that stops answers first and can
be resumed.

    forgetter = Forgetter(index, symbols, stores, clones=home / "repos")
    preview = forgetter.preview("shop", scope, configured)   # refusals raise here
    report = forgetter.forget("shop")                        # under the ingest lock

Steps, each one idempotent, under the repository's ingest lock (so no ingest, job or
scheduled run of it writes meanwhile):

1. the index: one transaction in SQLite; in Pinecone the repository is hidden first and
   its records deleted after (`bot.index.pinecone.removal`). This is the commit point:
   from here on no search returns it, symbol answers need it indexed (`in step`),
   `status`, `repos` and maps list only what is indexed;
2. the symbol table (one transaction);
3. the run log: its runs and its next run (one transaction);
4. queued re-index jobs, failed with a sentence for whoever waits on them;
5. its clone in `CODECITE_HOME/repos`, renamed aside before it is deleted.

A process that dies midway leaves only rows that nothing reads; `preview` still finds
them (`_leftovers`), so running `forget` again finishes the job. Feedback rows stay: they are the
history of answers given, not part of what answers. The embedding cache is keyed by
content, shared with every repository holding the same text, and capped: it stays.
"""

from __future__ import annotations

import glob
import logging
import shutil
import uuid
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path

from bot.errors import BotError, ScopeError, StoreError
from bot.index.base import Index
from bot.models import RepoState
from bot.reports import ForgetPreview, ForgetReport
from bot.store.base import StoreSet, SymbolTable

log = logging.getLogger(__name__)

LOCK_WAIT = 60.0  # seconds to wait for an ingest of the repository to end
ASIDE = ".{}.forgotten-"  # a clone being deleted: `.shop.forgotten-<random>`


class StillConfigured(BotError):
    user_message = "That repository is listed in codecite.toml."


def cancelled(repo: str) -> str:
    """What a reindex waiting on a job cancelled by `forget` is told."""
    return f"• {repo}: not re-indexed: it was forgotten before the run started."


class Forgetter:
    """`stores`: the run log, the job table and the ingest locks (opened on first use)."""

    def __init__(
        self, index: Index, symbols: SymbolTable | None, stores: StoreSet, *, clones: Path
    ) -> None:
        self._index = index
        self._symbols = symbols
        self._stores = stores
        self._clones = clones

    def preview(
        self, repo: str, scope: frozenset[str] | None, configured: Collection[str]
    ) -> ForgetPreview:
        """What `forget(repo)` would remove; ScopeError for a repository unknown or outside
        `scope` (the same sentence: a channel learns nothing of others), StillConfigured
        for one the scheduler would index again."""
        if not repo or (scope is not None and repo not in scope):
            raise ScopeError(f"There is no repository named {repo!r} here.")
        if repo in configured:
            raise StillConfigured(
                f"{repo} is listed in codecite.toml ([[repos]]), so the scheduler would index "
                "it again; remove it there instead, and the scheduler forgets it within a minute."
            )
        state = self._state(repo)
        if state is None and not self._leftovers(repo):
            raise ScopeError(f"There is no repository named {repo!r} here.")
        symbols = self._symbols.stats(repo)[0] if self._symbols is not None else 0
        return ForgetPreview(repo, state, symbols, clone=bool(self._clone_folders(repo)))

    def forget(self, repo: str) -> ForgetReport:
        """Remove every trace of `repo` (the module's steps); RepositoryBusy when an ingest
        holds it past LOCK_WAIT, StoreError naming how far it got when a step fails."""
        with self._stores.locks.hold(repo, wait=LOCK_WAIT):
            state = self._state(repo)
            with _stopped(f"Forgetting {repo} stopped in the index", repo):
                self._index.remove_repo(repo)  # the commit point: nothing answers from it now
            with _stopped(
                f"{repo} no longer answers, but forgetting it stopped before the end", repo
            ):
                return self._after_index(repo, state)

    def _after_index(self, repo: str, state: RepoState | None) -> ForgetReport:
        symbols = 0
        if self._symbols is not None:
            symbols = self._symbols.stats(repo)[0]
            self._symbols.remove_repo(repo)
        self._stores.history.remove_repo(repo)  # its commits, line states and PR titles
        runs = self._stores.runs.forget(repo)
        jobs = self._stores.jobs.cancel(repo, cancelled(repo))
        clone = self._remove_clone(repo, state)
        log.info("forgot %s: %d symbols, %d runs, %d queued jobs", repo, symbols, runs, jobs)
        return ForgetReport(repo, state, symbols, runs, jobs, clone)

    def _state(self, repo: str) -> RepoState | None:
        return next((s for s in self._index.repo_states() if s.name == repo), None)

    def _leftovers(self, repo: str) -> bool:
        """Traces an interrupted forget left behind (the index no longer lists `repo`)."""
        if self._index.manifest(repo) or self._clone_folders(repo):
            return True
        if self._symbols is not None and repo in self._symbols.repos():
            return True
        if repo in self._stores.history.repos():
            return True
        runs = self._stores.runs
        return runs.last(repo) is not None or runs.next_run(repo) is not None

    def _clone_folders(self, repo: str) -> list[Path]:
        """Its clone and any of its clones set aside by an interrupted forget."""
        if not repo or repo in (".", "..") or "/" in repo or "\\" in repo:
            return []  # never a name that leaves the clones folder
        aside = self._clones.glob(glob.escape(ASIDE.format(repo)) + "*")
        return [p for p in (self._clones / repo, *aside) if p.is_dir() and not p.is_symlink()]

    def _remove_clone(self, repo: str, state: RepoState | None) -> bool:
        """Rename each folder aside (a half-deleted clone is never used again), then delete."""
        folders = self._clone_folders(repo)
        if state is not None and _inside(Path(state.source), folders):
            log.warning("%s is indexed from inside its clone folder; the folder is kept", repo)
            return False
        for folder in folders:
            doomed = folder
            if folder.name == repo:
                doomed = folder.with_name(ASIDE.format(repo) + uuid.uuid4().hex[:8])
                folder.rename(doomed)
            shutil.rmtree(doomed)
        return bool(folders)


@contextmanager
def _stopped(what: str, repo: str) -> Iterator[None]:
    """A failed step as one sentence that says how to finish (the cause in `detail`)."""
    try:
        yield
    except (BotError, OSError) as exc:
        reason = exc.user_message if isinstance(exc, BotError) else "a file could not be removed"
        detail = exc.detail if isinstance(exc, BotError) else f"{type(exc).__name__}: {exc}"
        raise StoreError(
            f"{what} ({reason.rstrip('.')}); run forget {repo} again to finish.", detail=detail
        ) from exc


def _inside(source: Path, folders: list[Path]) -> bool:
    """Whether a local source path lies in one of `folders` (a URL never does)."""
    if not source.is_absolute():
        return False
    resolved = source.resolve()
    return any(resolved == f.resolve() or f.resolve() in resolved.parents for f in folders)
