"""Turn one ChangeSet into Pinecone writes and state rows, without any I/O.

Stale ids are computed, not trusted: besides `change.deletes`, every chunk the
state holds for a changed or removed file that is not in the file's new list
goes, and so do ids journaled by an earlier apply that crashed and that the new
state no longer contains. Nothing that is live after the change is deleted, even
when the change set lists it.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.errors import ConfigError, StoreError
from bot.index.base import ChangeSet
from bot.index.pinecone.records import (
    Record,
    chunk_from_metadata,
    chunk_metadata,
    file_metadata,
    file_record_id,
    placeholder,
    record_id,
    repo_record_id,
)
from bot.index.pinecone.sparse import SparseEncoder
from bot.index.pinecone.state import ChunkRow, FileRow
from bot.models import Chunk, FileEntry

if TYPE_CHECKING:
    from pinecone.models.vectors.vector import Vector

log = logging.getLogger(__name__)

CHUNK_ENCODER = SparseEncoder(avgdl=150.0)
FILE_ENCODER = SparseEncoder(avgdl=1500.0)


@dataclass(frozen=True, slots=True)
class ApplyPlan:
    records: list[Record]  # chunk and file records to upsert
    delete_ids: list[str]  # record ids to delete
    journal: list[str]  # record ids about to be written
    chunk_rows: list[ChunkRow]
    stale_chunks: list[str]  # chunk ids that leave the state
    file_rows: list[FileRow]
    removed_paths: list[str]


@dataclass(frozen=True, slots=True)
class Current:
    """What the state holds for the repository before the change."""

    chunks: Mapping[str, str]  # chunk id -> path
    manifest: Mapping[str, FileEntry]
    pending: Sequence[str]  # record ids journaled by an unfinished apply


def stored_vector_ids(change: ChangeSet) -> list[str]:
    """Chunk ids the change gives a vector for without re-sending the chunk (a backfill)."""
    sent = {c.id for c in change.upserts}
    return [cid for cid in change.vectors if cid not in sent]


def plan_apply(
    change: ChangeSet,
    current: Current,
    dimension: int,
    stored: Mapping[str, Vector] | None = None,
) -> ApplyPlan:
    """`stored` holds the records named by `stored_vector_ids`, fetched by record id."""
    repo = change.repo
    if change.state.name != repo:
        raise StoreError(detail=f"state is for {change.state.name!r}, not {repo!r}")
    upserts = _own_chunks(change)
    records, chunk_rows = _chunk_records(upserts, change.vectors, dimension)
    backfill = {cid: change.vectors[cid] for cid in stored_vector_ids(change)}
    more_records, more_rows = _revectored(backfill, stored or {}, current, dimension)
    records, chunk_rows = records + more_records, chunk_rows + more_rows
    file_records, file_rows = _file_records(change, dimension)
    new_lists = {path: list(entry.chunk_ids) for path, entry in current.manifest.items()}
    for path in change.removed_paths:
        new_lists.pop(path, None)
    for doc in change.files:
        new_lists[doc.path] = list(doc.chunk_ids)
    candidates = _stale_chunks(change, current)
    listed = {cid for ids in new_lists.values() for cid in ids} | {c.id for c in upserts}
    stale = candidates - listed
    live = listed | (set(current.chunks) - stale)  # every chunk that survives the change
    live_records = {record_id(cid) for cid in live}
    live_records |= {file_record_id(repo, path) for path in new_lists}
    live_records.add(repo_record_id(repo))
    gone_files = {file_record_id(repo, p) for p in change.removed_paths if p not in new_lists}
    strays = set(current.pending) - live_records
    all_records = records + file_records
    return ApplyPlan(
        records=all_records,
        delete_ids=sorted({record_id(cid) for cid in stale} | gone_files | strays),
        journal=[r["id"] for r in all_records],
        chunk_rows=chunk_rows,
        stale_chunks=sorted(stale),
        file_rows=file_rows,
        removed_paths=[p for p in change.removed_paths if p not in new_lists],
    )


def _own_chunks(change: ChangeSet) -> list[Chunk]:
    """The change's chunks, once each; a chunk of another repository is a caller bug."""
    unique: dict[str, Chunk] = {}
    for chunk in change.upserts:
        if chunk.repo != change.repo:
            raise StoreError(detail=f"chunk of {chunk.repo!r} in a change set for {change.repo!r}")
        unique[chunk.id] = chunk
    return list(unique.values())


def _stale_chunks(change: ChangeSet, current: Current) -> set[str]:
    prefix = f"{change.repo}#"
    stale = {cid for cid in change.deletes if cid.startswith(prefix)}
    touched = set(change.removed_paths) | {doc.path for doc in change.files}
    stale |= {cid for cid, path in current.chunks.items() if path in touched}
    for path in touched:
        entry = current.manifest.get(path)
        if entry is not None:
            stale.update(entry.chunk_ids)
    return stale


def _dense_values(chunk: Chunk, vector: Sequence[float] | None, dimension: int) -> list[float]:
    """The embedding as floats, or [] when there is none to store."""
    if vector is None:
        return []
    values = [float(v) for v in vector]
    if len(values) != dimension:
        raise ConfigError(
            f"The embedding model makes {len(values)}-dimensional vectors but the Pinecone "
            f"index holds {dimension}-dimensional ones; use a new PINECONE_INDEX name."
        )
    if not any(values) or not all(math.isfinite(v) for v in values):
        log.warning("unusable embedding for %s; stored without one", chunk.label)
        return []
    return values


def _chunk_records(
    chunks: Sequence[Chunk], vectors: Mapping[str, Sequence[float]], dimension: int
) -> tuple[list[Record], list[ChunkRow]]:
    records: list[Record] = []
    rows: list[ChunkRow] = []
    for chunk in chunks:
        dense = _dense_values(chunk, vectors.get(chunk.id), dimension)
        sparse = CHUNK_ENCODER.encode_document(
            chunk.text, path=chunk.path, symbol=chunk.symbol, header=chunk.header
        )
        record: Record = {
            "id": record_id(chunk.id),
            "values": dense or placeholder(dimension),
            "metadata": chunk_metadata(chunk, dense=bool(dense)),
        }
        if len(sparse):
            record["sparse_values"] = sparse.as_dict()
        records.append(record)
        rows.append(ChunkRow(chunk.id, chunk.repo, chunk.path, bool(dense), sparse.indices))
    return records, rows


def _revectored(
    vectors: Mapping[str, Sequence[float]],
    stored: Mapping[str, Vector],
    current: Current,
    dimension: int,
) -> tuple[list[Record], list[ChunkRow]]:
    """Stored chunk records re-sent with a new embedding; metadata and sparse values kept."""
    records: list[Record] = []
    rows: list[ChunkRow] = []
    for cid, vector in vectors.items():
        found = stored.get(record_id(cid))
        if cid not in current.chunks or found is None or not found.metadata:
            raise StoreError(detail=f"a vector names no stored chunk: {cid[:200]!r}")
        chunk = chunk_from_metadata(found.metadata)
        dense = _dense_values(chunk, vector, dimension)
        record: Record = {
            "id": record_id(cid),
            "values": dense or placeholder(dimension),
            "metadata": {**found.metadata, "dense": bool(dense)},
        }
        terms: tuple[int, ...] = ()
        if found.sparse_values is not None and found.sparse_values.indices:
            terms = tuple(found.sparse_values.indices)
            record["sparse_values"] = {"indices": list(terms), "values": found.sparse_values.values}
        records.append(record)
        rows.append(ChunkRow(cid, chunk.repo, current.chunks[cid], bool(dense), terms))
    return records, rows


def _file_records(change: ChangeSet, dimension: int) -> tuple[list[Record], list[FileRow]]:
    """One record per changed file: a sparse vector over its path and whole text."""
    records: list[Record] = []
    rows: list[FileRow] = []
    for doc in {d.path: d for d in change.files}.values():
        sparse = FILE_ENCODER.encode_document(doc.text, path=doc.path)
        record: Record = {
            "id": file_record_id(change.repo, doc.path),
            "values": placeholder(dimension),
            "metadata": file_metadata(change.repo, doc),
        }
        if len(sparse):
            record["sparse_values"] = sparse.as_dict()
        records.append(record)
        rows.append(
            FileRow(
                change.repo, doc.path, doc.blob, doc.language, tuple(doc.chunk_ids), sparse.indices
            )
        )
    return records, rows
