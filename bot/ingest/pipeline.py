"""Ingest one repository: list, diff against the index, chunk, embed, apply atomically.

Re-ingest semantics, by file (compared on git blob ids, so force-pushes and
rewritten history need no special case):
  - unchanged blob        -> skipped entirely (not read, not chunked)
  - new or changed blob   -> re-chunked; only chunk ids not already indexed are
                             written, and only their text is embedded (the
                             embedding cache also spares renamed text)
  - vanished path         -> its chunks are deleted
The new repository state is written in the same change set, so a reader sees
the old state or the whole new one, and a crash leaves the old one answering.

With a symbol table (`bot.symbols`), each re-chunked file's definitions and
references come from the same parse as its chunks. A file whose recorded
symbols are missing or stale (a lost table, a new extractor) is read and parsed
again for its symbols alone, without chunking or embedding. The table is
written after the index: it can always be rebuilt from the sources, so a
failure to write it is logged and the ingest still succeeds.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from bot.code.languages import language_for
from bot.errors import SourceError
from bot.index.base import ChangeSet, Index
from bot.ingest.history import HistoryOptions, HistoryReport, history_current, record_history
from bot.ingest.prepare import Batch, FileJob
from bot.ingest.probe import current_commit
from bot.ingest.sources import Source, SourceFile, default_name, open_source
from bot.ingest.symbol_sync import SymbolSync
from bot.ingest.workers import prepare_all, process_count
from bot.llm.embeddings import Embedded, Embedder
from bot.models import Chunk, FileDoc, FileEntry, RepoState
from bot.store.base import HistoryRecords, SymbolTable

log = logging.getLogger(__name__)

# Bumped when chunking or indexed text changes, so every file is re-chunked once
# (4: command-line options and irregular past forms became tokens).
PIPELINE_VERSION = "4"

Progress = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass(frozen=True, slots=True)
class IngestOptions:
    name: str | None = None
    branch: str | None = None
    include: Sequence[str] = ()
    exclude: Sequence[str] = ()
    token: str | None = None
    max_file_bytes: int = 1_000_000
    workers: int | None = None  # processes preparing files; None: one per core
    # how far back commits are recorded (a frozen value: one default is shared safely)
    history: HistoryOptions = HistoryOptions()  # noqa: RUF009


@dataclass(frozen=True, slots=True)
class IngestReport:
    repo: str
    branch: str
    commit: str
    files: int
    files_added: int
    files_changed: int
    files_removed: int
    chunks: int
    chunks_added: int
    chunks_removed: int
    skipped: dict[str, int] = field(default_factory=dict)
    secrets_redacted: dict[str, int] = field(default_factory=dict)  # kind -> count, in new text
    embedded_inputs: int = 0
    embedding_tokens: int = 0
    embedding_tokens_saved: int = 0
    seconds: float = 0.0
    symbol_files: int = 0  # files whose definitions and references were (re)extracted
    symbols_stored: bool = True  # False: the symbol table stayed behind (repaired next time)
    history: HistoryReport | None = None  # None: no history kept (a plain directory)

    @property
    def unchanged(self) -> bool:
        return not (self.files_added or self.files_changed or self.files_removed)


def file_key(blob: str) -> str:
    return f"{PIPELINE_VERSION}:{blob}"


class Ingestor:
    def __init__(
        self,
        index: Index,
        *,
        home: Path,
        embedder: Embedder | None = None,
        symbols: SymbolTable | None = None,
        history: HistoryRecords | None = None,
    ) -> None:
        self._index = index
        self._embedder = embedder
        self._home = home
        self._symbols = symbols
        self._history = history
        self.secrets_redacted: Counter[str] = Counter()

    def ingest(
        self,
        location: str,
        options: IngestOptions,
        progress: Progress | None = None,
        *,
        quick: bool = False,
    ) -> IngestReport:
        """Bring the index of one repository up to date with its source.

        `quick`: first ask the source for its commit without fetching; when it is
        the indexed commit (and the index was built by this pipeline version),
        nothing is fetched, listed, read or embedded.
        """
        # The local index's search segments are built once `_ingest` has returned and its
        # chunks are garbage: their peak does not stack on the ingest's (segwrite.py).
        with _segments_deferred(self._index):
            return self._ingest(location, options, progress, quick=quick)

    def _ingest(
        self, location: str, options: IngestOptions, progress: Progress | None, *, quick: bool
    ) -> IngestReport:
        started = time.monotonic()
        self.secrets_redacted = Counter()
        name = options.name or default_name(location)
        self._check_name_free(name, location)
        if quick:
            unchanged = self._unchanged(name, location, options)
            if unchanged is not None:
                return replace(unchanged, seconds=time.monotonic() - started)
        source = open_source(
            location,
            home=self._home,
            name=name,
            branch=options.branch,
            token=options.token,
            max_file_bytes=options.max_file_bytes,
            include=options.include,
            exclude=options.exclude,
        )
        try:
            old = self._index.manifest(name)
            listed, skipped = _indexable_files(source)
            changed = [f for f in listed if _needs_work(old.get(f.path), f)]
            removed = sorted(set(old) - {f.path for f in listed})
            symbols = SymbolSync(self._symbols, name)
            docs, chunks, counted = self._chunk(
                source, name, changed, symbols, progress, process_count(options.workers)
            )
            symbols.read_missing(source, [(f, file_key(f.blob)) for f in listed], progress)
        finally:
            source.close()  # its git process ends now, not during the embedding or at collection
        change, added, dropped = _change_set(name, source, old, docs, chunks, removed, len(listed))
        vectors, embedded = self._embed(change.upserts, progress)
        self._index.apply(replace(change, vectors=vectors, terms=counted))
        del counted
        # After the index: the table records the commit it matches, so a crash or a failed
        # write here is noticed by lookups and mended by the next ingest.
        stored = symbols.write([f.path for f in listed], source.checkout.commit)
        kept = [f.path for f in listed]
        history = record_history(self._history, self._symbols, source, name, options.history, kept)
        report = IngestReport(
            repo=name,
            branch=source.checkout.branch,
            commit=source.checkout.commit,
            files=len(listed),
            files_added=sum(1 for d in docs if d.path not in old),
            files_changed=sum(1 for d in docs if d.path in old),
            files_removed=len(removed),
            chunks=change.state.chunks,
            chunks_added=added,
            chunks_removed=dropped,
            skipped=dict(skipped),
            secrets_redacted=dict(self.secrets_redacted),
            embedded_inputs=len(vectors),
            embedding_tokens=embedded.tokens,
            embedding_tokens_saved=embedded.tokens_saved,
            seconds=time.monotonic() - started,
            symbol_files=len(symbols.found),
            symbols_stored=stored,
            history=history,
        )
        log.info(
            "indexed %s@%s: %d files (%d new, %d changed, %d removed), %d chunks (+%d/-%d)",
            name,
            report.commit[:7],
            report.files,
            report.files_added,
            report.files_changed,
            report.files_removed,
            report.chunks,
            added,
            dropped,
        )
        return report

    def _unchanged(self, name: str, location: str, options: IngestOptions) -> IngestReport | None:
        state = next((s for s in self._index.repo_states() if s.name == name), None)
        if state is None or not state.commit:
            return None
        manifest = self._index.manifest(name)
        if any(not e.blob.startswith(file_key("")) for e in manifest.values()):
            return None  # built by another pipeline version: everything is re-chunked
        symbols = SymbolSync(self._symbols, name)
        if not symbols.complete(manifest, state.commit):
            return None  # the symbol table is behind or missing files: they are read again
        if not history_current(self._history, name, state.commit, options.history):
            return None  # the recorded history is behind (or its horizon changed)
        if current_commit(location, options.branch, options.token) != state.commit:
            return None
        # Confirmed current: only the freshness moves.
        self._index.apply(ChangeSet(repo=name, state=replace(state, indexed_at=datetime.now(UTC))))
        return IngestReport(
            repo=name,
            branch=state.branch,
            commit=state.commit,
            files=state.files,
            files_added=0,
            files_changed=0,
            files_removed=0,
            chunks=state.chunks,
            chunks_added=0,
            chunks_removed=0,
        )

    def _check_name_free(self, name: str, location: str) -> None:
        for state in self._index.repo_states():
            if state.name == name and not _same_source(state.source, location):
                raise SourceError(
                    f"A repository named {name!r} is already indexed from {state.source}; "
                    "choose another name with --name."
                )

    def _chunk(
        self,
        source: Source,
        repo: str,
        files: list[SourceFile],
        symbols: SymbolSync,
        progress: Progress | None,
        processes: int,
    ) -> tuple[list[FileDoc], list[Chunk], dict[str, bytes]]:
        """The files' docs and chunks, and (for the local index) each chunk's term counts."""
        from bot.index.local.termcounts import pack

        docs: list[FileDoc] = []
        chunks: list[Chunk] = []
        counted: dict[str, bytes] = {}  # chunk id -> term counts (the workers counted them)
        local = _is_local(self._index)
        # The local index stores term counts (counted here, in the workers) and no file text.
        like = Batch(
            repo, source.checkout.commit, symbols.enabled, terms=local, file_text=not local
        )
        jobs = (FileJob(f.path, file_key(f.blob), raw) for f, raw in source.read_many(files))
        prepared = prepare_all(jobs, like, processes=processes)
        for done, p in enumerate(prepared, start=1):
            self.secrets_redacted.update(p.secrets)
            chunks.extend(p.chunks)
            docs.append(p.doc)
            symbols.add(p.doc.path, p.doc.blob, p.symbols)  # from the same parse as the chunks
            if p.terms is not None:
                counted.update(zip((c.id for c in p.chunks), pack(p.terms), strict=True))
            if progress is not None:
                progress("chunk", done, len(files))
        return docs, chunks, counted

    def _embed(
        self, chunks: Sequence[Chunk], progress: Progress | None
    ) -> tuple[dict[str, list[float]], Embedded]:
        """Vectors by chunk id, and what this ingest's own embedding call cost."""
        if self._embedder is None or not chunks:
            return {}, Embedded([])
        if progress is not None:
            progress("embed", 0, len(chunks))
        embedded = self._embedder.embed_documents([c.embed_text() for c in chunks])
        if progress is not None:
            progress("embed", len(chunks), len(chunks))
        vectors = {c.id: v for c, v in zip(chunks, embedded.vectors, strict=True)}
        return vectors, embedded


def _indexable_files(source: Source) -> tuple[list[SourceFile], Counter[str]]:
    listed: list[SourceFile] = []
    unsupported = 0
    for f in source.files():
        if language_for(f.path) is None:
            unsupported += 1
            continue
        listed.append(f)
    skipped = Counter(source.skipped())
    if unsupported:
        skipped["unsupported"] += unsupported
    return listed, skipped


def _segments_deferred(index: Index) -> AbstractContextManager[None]:
    from bot.index.local.index import LocalIndex

    return index.segments_deferred() if isinstance(index, LocalIndex) else nullcontext()


def _is_local(index: Index) -> bool:
    """Whether the index is the SQLite one: it stores term counts beside its chunks
    (`termcounts`) and sums a file's from its chunks, never reading `FileDoc.text`."""
    from bot.index.local.index import LocalIndex

    return isinstance(index, LocalIndex)


def _needs_work(entry: FileEntry | None, f: SourceFile) -> bool:
    return entry is None or entry.blob != file_key(f.blob)


def _change_set(
    repo: str,
    source: Source,
    old: dict[str, FileEntry],
    docs: list[FileDoc],
    chunks: list[Chunk],
    removed: list[str],
    file_count: int,
) -> tuple[ChangeSet, int, int]:
    old_ids = {cid for entry in old.values() for cid in entry.chunk_ids}
    changed_old_ids = {cid for d in docs if d.path in old for cid in old[d.path].chunk_ids}
    removed_ids = {cid for p in removed for cid in old[p].chunk_ids}
    new_ids = {c.id for c in chunks}
    upserts = [c for c in chunks if c.id not in old_ids]
    deletes = sorted((changed_old_ids | removed_ids) - new_ids)
    total = len(old_ids) - len(deletes) + len({c.id for c in upserts})
    checkout = source.checkout
    state = RepoState(
        name=repo,
        source=checkout.source,
        branch=checkout.branch,
        commit=checkout.commit,
        indexed_at=datetime.now(UTC),
        web_url=checkout.web_url,
        files=file_count,
        chunks=total,
    )
    change = ChangeSet(
        repo=repo,
        state=state,
        upserts=upserts,
        deletes=deletes,
        files=docs,
        removed_paths=removed,
    )
    return change, len(upserts), len(deletes)


def _same_source(recorded: str, location: str) -> bool:
    if recorded == location:
        return True
    try:
        return Path(location).resolve() == Path(recorded).resolve()
    except OSError:
        return False
