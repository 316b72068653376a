"""The Index contract that LocalIndex and PineconeIndex both fulfil.

Scores returned by `lexical`, `dense` and `files_lexical` are "higher is
better" within one call; callers fuse by rank, not by raw score.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from bot.models import Chunk, FileDoc, FileEntry, FileHit, Hit, RepoState

# Lexical fields a chunk is indexed under; weights are chosen by the caller.
FIELDS = ("path", "symbol", "header", "body")


@dataclass(frozen=True, slots=True)
class ChangeSet:
    """Everything that changes for one repository in one update, applied atomically.

    `files` holds the new or changed files (their full new chunk list);
    `removed_paths` the files that are gone. `deletes` are chunk ids to drop
    (stale chunks of changed files and all chunks of removed files). `state` is
    recorded last: a reader sees either the old state or the whole new one.
    """

    repo: str
    state: RepoState
    upserts: Sequence[Chunk] = ()
    vectors: Mapping[str, Sequence[float]] = field(default_factory=dict)  # chunk id -> vector
    deletes: Sequence[str] = ()
    files: Sequence[FileDoc] = ()
    removed_paths: Sequence[str] = ()
    # chunk id -> its term counts as the local index stores them, where the ingest counted
    # them ahead (in its worker processes); other chunks are counted when written
    terms: Mapping[str, bytes] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class IndexStats:
    repos: int
    files: int
    chunks: int
    vectors: int
    bytes: int  # on-disk size where known, else 0


@dataclass(frozen=True, slots=True)
class TermStats:
    """How many chunks a scope holds and, per query token, how many of them contain it.

    Absolute counts over the scope only (unlike BM25's corpus-wide IDF), so a caller can
    tell "this repository never mentions X" and weigh a question's words by rarity.
    """

    chunks: int
    df: Mapping[str, int] = field(default_factory=dict)  # token -> chunks containing it


class Index(Protocol):
    def apply(self, change: ChangeSet) -> None:
        """Apply one repository's change set atomically (all or nothing)."""

    def remove_repo(self, repo: str) -> None:
        """Forget a repository: its chunks, files, vectors and state."""

    def repo_states(self) -> list[RepoState]:
        """Every indexed repository's recorded state, by name."""

    def manifest(self, repo: str) -> dict[str, FileEntry]:
        """path -> what is indexed for that file (empty for an unknown repo)."""

    def lexical(
        self,
        terms: Sequence[str],
        *,
        repos: frozenset[str] | None,
        k: int,
        fields: Sequence[str] | None = None,
    ) -> list[Hit]:
        """BM25 over code-aware tokens; any term may match. `fields` restricts columns."""

    def files_lexical(
        self, terms: Sequence[str], *, repos: frozenset[str] | None, k: int
    ) -> list[FileHit]:
        """BM25 over whole files (path + contents): the file-level evidence."""

    def dense(self, vector: Sequence[float], *, repos: frozenset[str] | None, k: int) -> list[Hit]:
        """Nearest chunks by embedding (inner product); [] when no vectors are stored."""

    def term_stats(self, tokens: Sequence[str], *, repos: frozenset[str] | None) -> TermStats:
        """Chunks in scope, and how many contain each token (in any field); 0 when none."""

    def chunks_of(self, repo: str, path: str) -> list[Chunk]:
        """A file's chunks in line order (for merging neighbours)."""

    def ids_by_prefix(self, prefix: str) -> list[str]:
        """Chunk ids starting with `prefix` (e.g. `repo#path#`)."""

    def stats(self) -> IndexStats: ...

    def close(self) -> None: ...


@runtime_checkable
class HybridIndex(Protocol):
    """Stores that score dense and sparse together in one query (Pinecone)."""

    def hybrid(
        self,
        vector: Sequence[float] | None,
        terms: Sequence[str],
        *,
        repos: frozenset[str] | None,
        k: int,
        alpha: float | None = None,
    ) -> list[Hit]:
        """`alpha * dense + (1 - alpha) * sparse`; alpha None = the store's configured weight."""


@dataclass(frozen=True, slots=True)
class Rebuild:
    """A repository to index again into a new index file (the old one was damaged)."""

    name: str
    source: str
    branch: str = ""


@runtime_checkable
class Recovering(Protocol):
    """Stores that find their own damage, set themselves aside and await a rebuild from the
    repositories (the local index file; Pinecone's state is rebuilt from Pinecone)."""

    on_damage: Callable[[], None] | None  # called once damage was found and set aside

    def rebuilds(self) -> list[Rebuild]:
        """The repositories awaited after damage ([] when whole)."""
        ...

    def verify(self) -> bool:
        """Check the whole store; False (and set aside, awaiting rebuilds) when damaged."""
        ...
