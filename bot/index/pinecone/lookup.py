"""Chunks read back from Pinecone by record id: those of one file, and the chunk ids under
a prefix (ids too long for Pinecone are hashed, so only their metadata names the chunk)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.index.pinecone.records import CHUNK, chunk_from_metadata, classify, id_prefix
from bot.models import Chunk

if TYPE_CHECKING:
    from bot.index.pinecone.client import PineconeData


def file_chunks(data: PineconeData, repo: str, path: str, rids: list[str]) -> list[Chunk]:
    """The chunks of `path` among records `rids` (none given: listed by the file's prefix,
    for a file another replica wrote), in line order."""
    if not rids:
        rids = data.list_ids(id_prefix(f"{repo}#{path}#"))
    chunks = [
        chunk_from_metadata(md)
        for vec in data.fetch(rids).values()
        if (md := vec.metadata or {}).get("rec") == CHUNK and md.get("path") == path
    ]
    return sorted(chunks, key=lambda c: (c.start_line, c.end_line))


def chunk_ids_by_prefix(data: PineconeData, prefix: str) -> list[str]:
    found: set[str] = set()
    unresolved: list[str] = []
    for rid in data.list_ids(id_prefix(prefix)):
        kind, key = classify(rid)
        if kind == CHUNK:
            found.add(key)
        elif not kind:
            unresolved.append(rid)
    if unresolved:  # hashed ids: only the metadata knows the chunk id
        for vec in data.fetch(unresolved).values():
            if (md := vec.metadata or {}).get("rec") == CHUNK:
                found.add(chunk_from_metadata(md).id)
    return sorted(cid for cid in found if cid.startswith(prefix))
