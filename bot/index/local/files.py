"""LocalIndex's file rows: each file's term counts, summed from its chunks' as they are written.

A file's counts (`termcounts.files_terms`) need the counts of all its chunks.
Those of new chunks are handed over as their rows are written (`chunk_written`)
and held only until every new chunk of the file has been seen; the file is then
summed and written with the next batch (`flush`). A file listing chunks that
were already stored is summed at the end (`finish`), reading those from the
table. So a large ingest never holds every chunk's counts at once, nor reads
them back.

Rows are identical to writing every file in one go: new files get their rowids
in the order the change set lists them, whatever order they complete in, and a
file whose content and chunks are unchanged keeps its stored counts.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.index.local.termcounts import files_terms
from bot.models import FileDoc

FILES_PER_BATCH = 256  # files summed by one numpy pass
_IN_JSON = "IN (SELECT value FROM json_each(?))"
_INSERT = (
    "INSERT INTO files (fid, repo, path, blob, language, chunk_ids, terms)"
    " VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_UPDATE = "UPDATE files SET blob = ?, language = ?, chunk_ids = ?, terms = ? WHERE fid = ?"

Stored = tuple[int, str, str, bytes]  # fid, blob, chunk_ids, terms


@dataclass(slots=True)
class FileRows:
    """The file rows of one change set, inside the caller's write transaction."""

    conn: sqlite3.Connection
    repo: str
    latest: dict[str, FileDoc]
    existing: dict[str, Stored]
    ids: dict[str, str]  # path -> chunk ids as stored (JSON)
    fids: dict[str, int]  # rowids of new files, in the order the change set lists them
    left: dict[str, int] = field(default_factory=dict)  # files to sum: their chunks not yet seen
    file_of: dict[str, str] = field(default_factory=dict)  # chunk id -> file to sum
    held: dict[str, bytes] = field(default_factory=dict)  # counts of chunks seen, not yet summed
    ready: list[str] = field(default_factory=list)  # files whose every chunk was seen
    written: set[str] = field(default_factory=set)
    changed: bool = False  # a file is new, or its counts changed

    @classmethod
    def plan(cls, conn: sqlite3.Connection, repo: str, docs: Sequence[FileDoc]) -> FileRows:
        latest = {d.path: d for d in docs}
        existing: dict[str, Stored] = {
            path: (fid, blob, ids, terms)
            for fid, path, blob, ids, terms in conn.execute(
                f"SELECT fid, path, blob, chunk_ids, terms FROM files WHERE repo = ?"
                f" AND path {_IN_JSON}",
                (repo, json.dumps(list(latest))),
            )
        }
        first = int(conn.execute("SELECT max(fid) FROM files").fetchone()[0] or 0) + 1
        new = [path for path in latest if path not in existing]
        ids = {path: json.dumps(list(d.chunk_ids)) for path, d in latest.items()}
        rows = cls(conn, repo, latest, existing, ids, {p: first + i for i, p in enumerate(new)})
        for path, doc in latest.items():
            old = existing.get(path)
            if old is not None and old[1:3] == (doc.blob, ids[path]):
                continue  # same content, same chunks: same counts
            rows.left[path] = len(set(doc.chunk_ids))
            rows.file_of.update(dict.fromkeys(doc.chunk_ids, path))
            if not doc.chunk_ids:
                rows.ready.append(path)
        return rows

    def chunk_written(self, cid: str, terms: bytes) -> None:
        """A new chunk's counts, once its row is in the table."""
        path = self.file_of.get(cid)
        if path is None or path in self.written or cid in self.held:
            return
        self.held[cid] = terms
        self.left[path] -= 1
        if self.left[path] == 0:
            self.ready.append(path)

    def flush(self, *, at_least: int = FILES_PER_BATCH) -> None:
        """Sum and write the files whose chunks were all seen, once enough are waiting."""
        while self.ready and len(self.ready) >= at_least:
            batch, self.ready = self.ready[:FILES_PER_BATCH], self.ready[FILES_PER_BATCH:]
            self._write(batch)

    def finish(self) -> bool:
        """Write every remaining file; True if any file is new or its counts changed."""
        self.flush(at_least=1)
        rest = [path for path in self.left if path not in self.written]
        for start in range(0, len(rest), FILES_PER_BATCH):
            self._write(rest[start : start + FILES_PER_BATCH])
        kept = [
            (d.blob, d.language, self.ids[p], self.existing[p][3], self.existing[p][0])
            for p, d in self.latest.items()
            if p not in self.left
        ]
        self.conn.executemany(_UPDATE, kept)
        return self.changed

    def _write(self, paths: Sequence[str]) -> None:
        docs = [self.latest[p] for p in paths]
        counts = self._stored([c for d in docs for c in d.chunk_ids if c not in self.held])
        counts.update((c, self.held[c]) for d in docs for c in d.chunk_ids if c in self.held)
        summed = files_terms(
            (d.path, [counts[c] for c in d.chunk_ids if c in counts]) for d in docs
        )
        inserts, updates = [], []
        for doc, terms in zip(docs, summed, strict=True):
            old, ids = self.existing.get(doc.path), self.ids[doc.path]
            if old is None:
                fid = self.fids[doc.path]
                inserts.append((fid, self.repo, doc.path, doc.blob, doc.language, ids, terms))
            else:
                updates.append((doc.blob, doc.language, ids, terms, old[0]))
            self.changed = self.changed or old is None or terms != old[3]
            self.written.add(doc.path)
            for cid in doc.chunk_ids:
                self.held.pop(cid, None)
        self.conn.executemany(_INSERT, inserts)
        self.conn.executemany(_UPDATE, updates)

    def _stored(self, ids: Sequence[str]) -> dict[str, bytes]:
        """Counts of chunks already in the table."""
        if not ids:
            return {}
        rows = self.conn.execute(
            f"SELECT id, terms FROM chunks WHERE repo = ? AND id {_IN_JSON}",
            (self.repo, json.dumps(sorted(set(ids)))),
        )
        return dict(rows.fetchall())
