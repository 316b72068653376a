"""Rebuild PineconeIndex's local state from Pinecone alone.

Every record id in the namespace is listed (by the empty prefix, page by page)
and fetched in slices, keeping only metadata and sparse dimensions, so memory
stays bounded by one slice of full records. Chunk records give the chunk rows
(and, grouped by file in line order, each file's chunk list); file records give
blobs and file-level terms; repository records give the RepoStates. A file whose
file record is missing (an apply interrupted before it was written) gets an
empty blob, so the next ingest rewrites it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bot.index.pinecone.records import (
    CHUNK,
    FILE,
    REPO,
    chunk_from_metadata,
    classify,
    id_batches,
    repo_state_from_metadata,
)
from bot.models import RepoState
from bot.store.base import PineconeStateRecords
from bot.store.records import ChunkRow, FileRow

if TYPE_CHECKING:  # the SDK is loaded by the first request
    from pinecone.models.vectors.vector import Vector

    from bot.index.pinecone.client import PineconeData

log = logging.getLogger(__name__)

_SLICE = 1000


@dataclass
class _Collected:
    states: list[RepoState] = field(default_factory=list)
    chunks: list[ChunkRow] = field(default_factory=list)
    lines: dict[str, tuple[int, int]] = field(default_factory=dict)  # chunk id -> line range
    files: dict[tuple[str, str], FileRow] = field(default_factory=dict)
    languages: dict[tuple[str, str], str] = field(default_factory=dict)


def rebuild(
    data: PineconeData, state: PineconeStateRecords, *, unless_filled: bool = False
) -> bool:
    """Replace `state` with what Pinecone holds; whether it did.

    `unless_filled`: only when the state holds no repository while the namespace holds
    records (a shared database started beside a full index); a filled state, or an empty
    namespace, costs one small read and is left alone.
    """
    if unless_filled and (state.repo_states() or not data.namespace_count()):
        return False
    ids = data.list_ids("")
    seen = _Collected()
    for batch in id_batches(ids, _SLICE):
        for rid, vec in data.fetch(batch).items():
            _collect(seen, rid, vec)
    files = _files_with_chunks(seen)
    state.replace_all(seen.states, files, seen.chunks)
    log.info(
        "pinecone state rebuilt: %d repositories, %d files, %d chunks",
        len(seen.states),
        len(files),
        len(seen.chunks),
    )
    return True


def _collect(seen: _Collected, rid: str, vec: Vector) -> None:
    meta: Mapping[str, Any] = vec.metadata or {}
    terms = tuple(vec.sparse_values.indices) if vec.sparse_values is not None else ()
    rec = meta.get("rec")
    repo, path = str(meta.get("repo", "")), str(meta.get("path", ""))
    if rec == CHUNK:
        kind, key = classify(rid)
        chunk = chunk_from_metadata(meta)
        cid = key if kind == CHUNK else chunk.id  # the id as written, even if text was trimmed
        seen.chunks.append(ChunkRow(cid, repo, path, bool(meta.get("dense")), terms))
        seen.lines[cid] = (chunk.start_line, chunk.end_line)
        seen.languages.setdefault((repo, path), chunk.language)
    elif rec == FILE:
        blob, language = str(meta.get("blob", "")), str(meta.get("language", ""))
        seen.files[(repo, path)] = FileRow(repo, path, blob, language, (), terms)
    elif rec == REPO:
        seen.states.append(repo_state_from_metadata(meta))
    else:
        log.warning("pinecone record %s is not codecite's; ignored", rid[:80])


def _files_with_chunks(seen: _Collected) -> list[FileRow]:
    """Each file's chunk ids in line order; files known only from chunks get an empty blob."""
    by_file: dict[tuple[str, str], list[str]] = {}
    for chunk in seen.chunks:
        by_file.setdefault((chunk.repo, chunk.path), []).append(chunk.id)
    rows: list[FileRow] = []
    for key in sorted(set(by_file) | set(seen.files)):
        ids = sorted(by_file.get(key, []), key=lambda cid: (seen.lines[cid], cid))
        row = seen.files.get(key)
        if row is None:
            row = FileRow(key[0], key[1], "", seen.languages.get(key, ""), (), ())
        rows.append(FileRow(row.repo, row.path, row.blob, row.language, tuple(ids), row.terms))
    return rows
