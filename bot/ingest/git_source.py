"""A repository at one commit, read from git objects: trees parsed, blobs streamed."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence

from bot.ingest import trees
from bot.ingest.catfile import BlobReader
from bot.ingest.clone import fetch_blobs
from bot.ingest.git import Git
from bot.ingest.hosting import RemoteURL
from bot.ingest.source_base import MEMO, Checkout, Entry, Source, SourceFile, SourceOptions

log = logging.getLogger(__name__)

_MODES = {"100644": "file", "100755": "file", "120000": "symlink", "160000": "submodule"}


class GitSource(Source):
    """A commit read from git objects: its trees parsed, its blobs streamed by `cat-file`.

    A clone (`remote` given) is blobless: the blobs worth reading are fetched in
    batches before they are read, so git itself never fetches (see `bot.ingest.git`).
    A blob the repository lacks (and cannot fetch) skips its file as `missing_blob`.
    """

    def __init__(
        self, checkout: Checkout, git: Git, options: SourceOptions, remote: RemoteURL | None = None
    ) -> None:
        super().__init__(checkout, options)
        self._git = git
        self._remote = remote
        self._blobs = BlobReader(git)
        self._memo = MEMO
        self.lacking: frozenset[str] = frozenset()  # blobs the remote could not send

    @property
    def git(self) -> Git:
        """The runner for this repository (its history is read through it)."""
        return self._git

    @property
    def remote(self) -> RemoteURL | None:
        """The clone's remote (blobs it lacks are fetched from there), None for a local one."""
        return self._remote

    def close(self) -> None:
        super().close()
        self._blobs.close()

    def _entries(self) -> Iterator[Entry]:
        commit = self.checkout.commit
        absent = trees.missing_objects(self._git, commit)
        root = self._git.text("rev-parse", "--verify", f"{commit}^{{tree}}")
        rows = trees.walk(self._blobs, root, absent)
        self._blobs.close()  # its process slot is free while the commands below run
        if self._remote is not None and absent:
            absent = self._fetch_wanted(rows, absent)
            self.lacking = frozenset(absent)
        files = [r.oid for r in rows if not r.problem and _MODES.get(r.mode) == "file"]
        sizes = trees.blob_sizes(self._git, [oid for oid in files if oid not in absent])
        entries = sorted((_tree_entry(r, sizes) for r in rows), key=lambda e: e.path)
        missing = [e.path for e in entries if e.kind == "missing_blob"]
        for path in missing[:20]:
            log.warning("%s in %s: blob missing from the repository", path, self.checkout.name)
        if len(missing) > 20:
            log.warning("... and %d more files whose blobs are missing", len(missing) - 20)
        return _unique_paths(entries)

    def _fetch_wanted(self, rows: list[trees.TreeEntry], absent: set[str]) -> set[str]:
        """Fetch the absent blobs of files worth reading; what is absent afterwards."""
        assert self._remote is not None
        wanted = [
            r.oid
            for r in rows
            if r.oid in absent
            and _MODES.get(r.mode) == "file"
            and self._listing_reason(Entry(r.path, r.oid, 0, "file")) is None
        ]
        if not wanted:
            return absent
        log.info("fetching %d blobs of %s", len(wanted), self.checkout.name)
        fetch_blobs(self._git, list(dict.fromkeys(wanted)), self._remote)
        return trees.missing_objects(self._git, self.checkout.commit)

    def _contents(self, entries: Sequence[Entry]) -> Iterator[bytes | None]:
        for _, _, data in self._blobs.read_objects(e.blob for e in entries):
            yield data

    def _read(self, files: Sequence[SourceFile]) -> Iterator[bytes]:
        for _, data in self._blobs.read_many(f.blob for f in files):
            yield data


def _tree_entry(row: trees.TreeEntry, sizes: dict[str, int]) -> Entry:
    if row.problem:
        return Entry(row.path, row.oid, 0, row.problem)
    kind = _MODES.get(row.mode, "special")
    if kind == "file" and row.oid not in sizes:
        return Entry(row.path, row.oid, 0, "missing_blob")
    return Entry(row.path, row.oid, sizes.get(row.oid, 0), kind)


def _unique_paths(entries: list[Entry]) -> Iterator[Entry]:
    """Sorted entries with a name repeated in one tree (malformed) listed once, the rest counted.

    Entries already skipped for another reason (an unsafe name) keep that reason.
    """
    previous = None
    for entry in entries:
        if entry.kind not in _LISTED_KINDS:
            yield entry
        elif entry.path == previous:
            yield Entry(entry.path, entry.blob, 0, "duplicate_path")
        else:
            previous = entry.path
            yield entry


_LISTED_KINDS = frozenset({*_MODES.values(), "special", "missing_blob"})
