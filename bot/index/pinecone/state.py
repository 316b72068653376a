"""PineconeIndex's local state lives in the storage seam (`bot.store.pinecone_state`)."""

from __future__ import annotations

from bot.store.pinecone_state import (
    CHUNK_LEVEL,
    FILE_LEVEL,
    SCHEMA_VERSION,
    ChunkRow,
    Counts,
    FileRow,
    PineconeState,
    rebuild_wanted,
)

__all__ = [
    "CHUNK_LEVEL",
    "FILE_LEVEL",
    "SCHEMA_VERSION",
    "ChunkRow",
    "Counts",
    "FileRow",
    "PineconeState",
    "rebuild_wanted",
]
