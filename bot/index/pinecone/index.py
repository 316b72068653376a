"""PineconeIndex: the Index contract on a Pinecone serverless index, hybrid dense + sparse.

Scope is a `repo` metadata filter inside one namespace, not a namespace per
repository. A channel's scope is often several repositories and by default all
of them; with namespaces every search would fan out into one query per
repository (N round trips, N read charges, a client-side merge), while a filter
(`repo $eq` / `$in`) is applied by Pinecone inside the one query, before top-k,
whatever the scope. Removing a repository lists its ids by the `repo#` prefix
and deletes them in batches. The namespace is configurable, so one index can
serve several deployments (and live tests) side by side.

Where things live: Pinecone holds chunk records (dense vector, code-aware BM25
sparse vector, chunk metadata with the text trimmed under 40 KB), one record
per file (a sparse vector over path + whole text: `files_lexical` gets real
file-level BM25 evidence from the same index instead of a guess aggregated from
chunk hits) and one record per repository with its RepoState. The state (PostgreSQL
with a database URL, shared by every process; else `pinecone_state.sqlite` in
CODECITE_HOME) holds repo states, the manifest, per-file chunk ids and the document
frequencies behind query IDF; `rebuild_state()` recreates it from Pinecone alone.

Pinecone has no transactions, so `apply` is ordered to converge instead: new
records are written first (their ids journaled locally beforehand), then stale
ids are deleted, then the repository record and the local state are written
last. An interrupted apply leaves the previous local state; running the same
change again (or the next one) rewrites, deletes what is stale, and removes the
journaled strays. Readers may briefly see new chunks beside old ones.

`lexical(fields=...)`: one sparse vector cannot be restricted to a field, so
path and symbol tokens are boosted when encoded, and a `fields` restriction is
applied to the returned matches (over-fetching to keep `k`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.config import Settings
from bot.errors import ConfigError, StoreError
from bot.index.base import ChangeSet, IndexStats, TermStats
from bot.index.pinecone.connection import PineconeConnection
from bot.index.pinecone.lookup import chunk_ids_by_prefix, file_chunks
from bot.index.pinecone.plan import (
    CHUNK_ENCODER,
    FILE_ENCODER,
    Current,
    plan_apply,
    stored_vector_ids,
)
from bot.index.pinecone.rebuild import rebuild
from bot.index.pinecone.records import (
    CHUNK,
    FILE,
    chunk_from_metadata,
    matches_fields,
    placeholder,
    record_id,
    repo_metadata,
    repo_record_id,
    restricted_fields,
    search_filter,
)
from bot.index.pinecone.removal import remove_repo
from bot.index.pinecone.sparse import SparseVector, query_tokens, token_index
from bot.index.pinecone.state import CHUNK_LEVEL, FILE_LEVEL, PineconeState
from bot.models import Chunk, FileEntry, FileHit, Hit, RepoState
from bot.runtime.remembered import Outage, Remembered
from bot.runtime.retry import Retrier
from bot.store.base import PineconeStateRecords, StoreSet
from bot.store.records import CorpusStats

if TYPE_CHECKING:  # the SDK is loaded by the first request (`status` needs none)
    from pinecone import Pinecone
    from pinecone.models.vectors.vector import ScoredVector

    from bot.index.pinecone.client import PineconeData

log = logging.getLogger(__name__)

STATE_FILE = "pinecone_state.sqlite"
FIELD_OVERFETCH = 4
UNKNOWN_DOCUMENTS = 1000  # chunks a scope is taken to hold when its count cannot be read


class PineconeIndex:
    """Index protocol on Pinecone. Owns the clients it is given and closes them.

    `pc`: the SDK's client, or what makes it: then it is made (and the SDK imported) by
    the first request, so commands that read only the state (`status`, `repos`) never
    load the SDK."""

    def __init__(
        self,
        pc: Pinecone | Callable[[], Pinecone],
        state: Path | PineconeStateRecords,
        *,
        index_name: str = "codecite",
        host: str | None = None,
        namespace: str = "",
        dimension: int | None = None,
        alpha: float = 0.5,
        retrier: Retrier | None = None,
        workers: int = 4,
        freshness_timeout: float = 0.0,
    ) -> None:
        if not 0.0 <= alpha <= 1.0:
            raise ConfigError("The hybrid alpha must be between 0 and 1.")
        self._conn = PineconeConnection(
            pc,
            name=index_name,
            host=host,
            namespace=namespace,
            dimension=dimension,
            retrier=retrier,
            workers=workers,
        )
        self.alpha = alpha
        self._freshness_timeout = freshness_timeout
        self._state = PineconeState(state) if isinstance(state, Path) else state  # a path: SQLite
        # The state's reads an answer needs, for while its store (the database) is away.
        self._known_states: Remembered[list[RepoState]] = Remembered("Pinecone state")
        self._stats_outage = Outage("Pinecone state")
        self._documents: dict[str, int] = {}  # per level, as last counted
        self._write_lock = threading.Lock()  # one writer at a time, like a SQLite index

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        dimension: int | None = None,
        alpha: float = 0.5,
        stores: StoreSet | None = None,
    ) -> PineconeIndex:
        """Build from the environment (state from `stores`, else SQLite); no request yet."""
        if settings.pinecone_api_key is None:
            raise ConfigError("CODECITE_INDEX=pinecone needs PINECONE_API_KEY.")
        key = settings.pinecone_api_key.get_secret_value()

        def client() -> Pinecone:
            from pinecone import Pinecone

            return Pinecone(api_key=key, source_tag="codecite", timeout=settings.pinecone_timeout)

        return cls(
            client,
            stores.pinecone_state if stores is not None else settings.home / STATE_FILE,
            index_name=settings.pinecone_index,
            host=settings.pinecone_host,
            dimension=dimension,
            alpha=alpha,
        )

    @property
    def _data(self) -> PineconeData:
        return self._conn.data

    @property
    def dimension(self) -> int:
        """The index's dense dimension (asked of Pinecone once when not configured)."""
        return self._conn.dimension

    def init_index(self, dimension: int | None) -> None:
        """Create the index when missing (unless PINECONE_HOST is set); check its dimension."""
        self._conn.init_index(dimension)

    service = "Pinecone"  # what a readiness probe's sentence calls it

    def ping(self) -> None:
        """StoreError unless Pinecone itself answers now (readiness: the state may be in
        the database, which says nothing of Pinecone)."""
        self._conn.ping()

    # --- writes ------------------------------------------------------------------------

    def apply(self, change: ChangeSet) -> None:
        with self._write_lock:
            self._apply(change)

    def _apply(self, change: ChangeSet) -> None:
        repo = change.repo
        current = Current(
            self._state.repo_chunks(repo), self._state.manifest(repo), self._state.pending(repo)
        )
        backfill = [record_id(cid) for cid in stored_vector_ids(change)]
        stored = self._data.fetch(backfill) if backfill else {}
        plan = plan_apply(change, current, self.dimension, stored)
        self._state.journal(repo, plan.journal)
        self._data.upsert(plan.records)
        self._data.delete(plan.delete_ids)
        self._data.upsert([self._repo_record(change.state)])
        self._state.commit(
            change.state,
            chunks=plan.chunk_rows,
            deleted=plan.stale_chunks,
            files=plan.file_rows,
            removed_paths=plan.removed_paths,
        )
        log.info(
            "pinecone: %s: %d records written, %d deleted",
            repo,
            len(plan.records),
            len(plan.delete_ids),
        )
        self._await_freshness()

    def _repo_record(self, state: RepoState) -> dict[str, Any]:
        return {
            "id": repo_record_id(state.name),
            "values": placeholder(self.dimension),
            "metadata": repo_metadata(state),
        }

    def remove_repo(self, repo: str) -> None:
        """Hidden from searches first, then deleted; resumable (`removal`)."""
        with self._write_lock:
            remove_repo(self._data, self._state, repo)
            self._await_freshness()

    def rebuild_state(self, *, unless_filled: bool = False) -> bool:
        """Recreate the state from Pinecone (list + fetch); see `rebuild` for `unless_filled`."""
        with self._write_lock:
            return rebuild(self._data, self._state, unless_filled=unless_filled)

    # --- reads -------------------------------------------------------------------------

    def repo_states(self) -> list[RepoState]:
        """The state's repositories (the last ones read while its store is away)."""
        return self._known_states.read(self._state.repo_states)

    def manifest(self, repo: str) -> dict[str, FileEntry]:
        return self._state.manifest(repo)

    def lexical(
        self,
        terms: Sequence[str],
        *,
        repos: frozenset[str] | None,
        k: int,
        fields: Sequence[str] | None = None,
    ) -> list[Hit]:
        wanted = restricted_fields(fields)
        tokens = query_tokens(terms)
        if k <= 0 or not tokens or (repos is not None and not repos):
            return []
        sparse = self._query_sparse(CHUNK_LEVEL, tokens, repos)
        top_k = k * FIELD_OVERFETCH if wanted else k
        matches = self._query(top_k, None, sparse, repos, CHUNK)
        hits = [Hit(chunk_from_metadata(m.metadata or {}), m.score) for m in matches if m.score > 0]
        if wanted:
            hits = [h for h in hits if matches_fields(h.chunk, set(tokens), wanted)]
        return hits[:k]

    def files_lexical(
        self, terms: Sequence[str], *, repos: frozenset[str] | None, k: int
    ) -> list[FileHit]:
        tokens = query_tokens(terms)
        if k <= 0 or not tokens or (repos is not None and not repos):
            return []
        sparse = self._query_sparse(FILE_LEVEL, tokens, repos)
        matches = self._query(k, None, sparse, repos, FILE)
        return [
            FileHit(str(md.get("repo", "")), str(md.get("path", "")), m.score)
            for m in matches
            if m.score > 0 and (md := m.metadata or {})
        ]

    def dense(self, vector: Sequence[float], *, repos: frozenset[str] | None, k: int) -> list[Hit]:
        if k <= 0 or (repos is not None and not repos):
            return []
        return _hits(self._query(k, self._checked(vector), None, repos, CHUNK, dense_only=True))

    def term_stats(self, tokens: Sequence[str], *, repos: frozenset[str] | None) -> TermStats:
        distinct = list(dict.fromkeys(tokens))
        if repos is not None and not repos:
            return TermStats(0, dict.fromkeys(distinct, 0))
        dims = sorted({token_index(t) for t in distinct})
        stats = self._corpus_stats(CHUNK_LEVEL, dims, repos)
        if stats is None:  # unknown: every token held by one chunk, the scope as last counted
            documents = self._documents.get(CHUNK_LEVEL, UNKNOWN_DOCUMENTS)
            return TermStats(documents, dict.fromkeys(distinct, 1))
        return TermStats(stats.documents, {t: stats.df.get(token_index(t), 0) for t in distinct})

    def hybrid(
        self,
        vector: Sequence[float] | None,
        terms: Sequence[str],
        *,
        repos: frozenset[str] | None,
        k: int,
        alpha: float | None = None,
    ) -> list[Hit]:
        """One query scoring `alpha * dense + (1 - alpha) * sparse` (both in comparable ranges)."""
        weight = self.alpha if alpha is None else alpha
        if not 0.0 <= weight <= 1.0:
            raise ValueError("alpha must be between 0 and 1")
        tokens = query_tokens(terms)
        if vector is None or weight == 0.0:
            return self.lexical(tokens, repos=repos, k=k)
        if not tokens or weight == 1.0:
            return self.dense(vector, repos=repos, k=k)
        if k <= 0 or (repos is not None and not repos):
            return []
        dense = [v * weight for v in self._checked(vector)]
        sparse = self._query_sparse(CHUNK_LEVEL, tokens, repos).scaled(1.0 - weight)
        return _hits(self._query(k, dense, sparse, repos, CHUNK))

    def chunks_of(self, repo: str, path: str) -> list[Chunk]:
        try:
            ids = self._state.file_chunk_ids(repo, path)
        except StoreError as exc:  # the state's store is away: Pinecone knows them too
            self._stats_outage.failed(exc, "chunks are listed from Pinecone")
            ids = []
        return file_chunks(self._data, repo, path, [record_id(cid) for cid in ids])

    def ids_by_prefix(self, prefix: str) -> list[str]:
        return chunk_ids_by_prefix(self._data, prefix)

    def stats(self) -> IndexStats:
        c = self._state.counts()
        return IndexStats(repos=c.repos, files=c.files, chunks=c.chunks, vectors=c.vectors, bytes=0)

    def close(self) -> None:
        self._state.close()
        self._conn.close()

    # --- helpers -----------------------------------------------------------------------

    def _query_sparse(
        self, level: str, tokens: Sequence[str], repos: frozenset[str] | None
    ) -> SparseVector:
        indices = sorted({token_index(t) for t in tokens})
        stats = self._corpus_stats(level, indices, repos)
        encoder = CHUNK_ENCODER if level == CHUNK_LEVEL else FILE_ENCODER
        return encoder.encode_query(tokens, stats)

    def _corpus_stats(
        self, level: str, indices: Sequence[int], repos: frozenset[str] | None
    ) -> CorpusStats | None:
        """Document frequencies for query IDF; None (uniform weights) while the state's
        store is away: a plainer ranking beats no answer."""
        try:
            stats = self._state.corpus_stats(level, indices, repos)
        except StoreError as exc:
            self._stats_outage.failed(exc, "queries are weighted without document frequencies")
            return None
        self._stats_outage.answered()
        self._documents[level] = stats.documents
        return stats

    def _query(
        self,
        k: int,
        dense: Sequence[float] | None,
        sparse: SparseVector | None,
        repos: frozenset[str] | None,
        rec: str,
        *,
        dense_only: bool = False,
    ) -> list[ScoredVector]:
        """Unscoped means every repository the state lists: the records of one being
        removed, hidden first (`removal`), never come back from a search."""
        scope = repos if repos is not None else {s.name for s in self.repo_states()}
        if not scope:
            return []
        flt = search_filter(frozenset(scope), rec, dense_only=dense_only)
        vector = dense if dense is not None else [0.0] * self.dimension
        return self._data.query(top_k=k, vector=vector, sparse=sparse, filter=flt)

    def _checked(self, vector: Sequence[float]) -> list[float]:
        from bot.index.pinecone.control import check_dimension

        values = [float(v) for v in vector]
        check_dimension(self._conn.label, self.dimension, len(values))
        return values

    def _await_freshness(self) -> None:
        """Optionally wait until Pinecone's (eventually consistent) count matches the state."""
        if self._freshness_timeout <= 0:
            return
        expected = self._state.record_count()
        deadline = time.monotonic() + self._freshness_timeout
        while self._data.namespace_count() != expected and time.monotonic() < deadline:
            time.sleep(1.0)  # a remote service catching up, not test synchronisation


def _hits(matches: Sequence[ScoredVector]) -> list[Hit]:
    return [Hit(chunk_from_metadata(m.metadata or {}), m.score) for m in matches]
