"""Removing one repository from Pinecone, in an order that hides it first and can be resumed.

Pinecone has no transactions, and a repository can hold many thousands of records:

1. its repository record goes, so a rebuild of the state from Pinecone no longer
   sees the repository;
2. the state stops listing it (`hide_repo`, one transaction): unscoped searches filter
   on the listed repositories (`PineconeIndex`), scoped ones never name it again, so
   from here on no answer draws on it, even on records not yet deleted;
3. its records are deleted: those listed by the `repo#` prefix, and those the state
   still knows (chunks, files, journaled ids: hashed ids do not share the prefix);
4. the state's remaining rows go (one transaction).

A process that dies midway leaves rows and records no search returns, and running the
removal again finishes it: each step is idempotent and step 3 still finds every id.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from bot.index.pinecone.records import file_record_id, record_id, repo_prefix, repo_record_id
from bot.store.base import PineconeStateRecords

if TYPE_CHECKING:  # the SDK is loaded by the first request
    from bot.index.pinecone.client import PineconeData

log = logging.getLogger(__name__)


def remove_repo(data: PineconeData, state: PineconeStateRecords, repo: str) -> None:
    """Every record and every state row of `repo` (see the module's order)."""
    data.delete([repo_record_id(repo)])
    state.hide_repo(repo)
    known = [record_id(cid) for cid in state.repo_chunks(repo)]
    known += [file_record_id(repo, path) for path in state.manifest(repo)]
    known += state.pending(repo)
    data.delete([*data.list_ids(repo_prefix(repo)), *known])
    state.remove_repo(repo)
    log.info("pinecone: %s removed (%d records known to the state)", repo, len(known))
