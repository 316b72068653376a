"""`codecite init-index`: create (or check) a remote index before the first ingest."""

from __future__ import annotations

from bot.index.base import Index


def prepare_index(index: Index, dimension: int | None, *, rebuild_state: bool = False) -> str:
    """Create or check a Pinecone index and say what it is; "" for the local index."""
    from bot.index.pinecone.index import PineconeIndex

    if not isinstance(index, PineconeIndex):
        return ""
    index.init_index(dimension)
    lines = [f"Pinecone index ready: dimension {index.dimension}, dotproduct, hybrid."]
    if rebuild_state:
        index.rebuild_state()
        lines.append(f"State rebuilt: {len(index.repo_states())} repositories.")
    return "\n".join(lines)
