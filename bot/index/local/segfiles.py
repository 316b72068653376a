"""A repository's BM25 segments in one file a process memory-maps instead of rebuilding.

    store = SegmentFiles(index_path.with_name(index_path.name + ".segments"), uid)
    store.write(found, weights)            # after the rows it was built from committed
    found = store.open(repo, generation, weights)   # None: missing, stale or damaged

A file holds one repository's chunk segment (with the field-restricted views queries
use on the hot path), its file segment and its file paths, as numpy arrays:

    b"CCSEG" + version byte + 2 spare bytes | u64 header length | header (JSON) | u32 CRC of it
    | arrays, each at a 64-byte-aligned offset the header gives

The header names the index (`uid`, a random id kept in the SQLite file's `meta`, so a
deleted and recreated index never meets an old file), the repository, the generation
stamp its rows had (`lexical_segments`), the field weights, the file's size and each
array's dtype, shape, offset and CRC-32. Opening checks all of it, and the CRCs of the
small arrays every query reads (ids, terms, indptr, norm, paths; read through the file, so
they do not stay resident); the large ones (docs, saturated, counts) are only mapped, so
memory follows the pages queries touch, and a posting pointing past its segment is caught
when it is scored (`bm25.DamagedSegment`). A file is written to a temporary name, fsynced
and renamed: a reader sees a whole file or none. Anything that does not match is rebuilt
from the SQLite rows by the caller: a file is a cache, never the truth. The format itself
is in `segformat`.
"""

from __future__ import annotations

import hashlib
import logging
import mmap
import os
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from bot.index.local.segformat import (
    PathTable,
    RepoSegments,
    arrays_of,
    checksums_match,
    read_header,
    segments_of,
    write_file,
)

__all__ = ["PathTable", "RepoSegments", "SegmentFiles"]

log = logging.getLogger(__name__)

SUFFIX = ".seg"
STALE_TEMP_SECONDS = 3600.0  # a temporary file this old belongs to no live writer


class SegmentFiles:
    """The segment files of one index, in their own directory beside the SQLite file."""

    def __init__(self, directory: Path, uid: str) -> None:
        self.directory = directory
        self.uid = uid
        self.opened = 0  # files mapped by this process (tests read it: no rebuild happened)

    # -- names -------------------------------------------------------------

    @staticmethod
    def _key(repo: str) -> str:
        return hashlib.blake2b(repo.encode("utf-8", "surrogatepass"), digest_size=10).hexdigest()

    def path(self, repo: str, generation: int) -> Path:
        return self.directory / f"{self._key(repo)}.{generation}{SUFFIX}"

    def _generations(self, repo: str) -> Iterator[tuple[int, Path]]:
        try:
            entries = list(self.directory.glob(f"{self._key(repo)}.*{SUFFIX}"))
        except OSError:
            return
        for entry in entries:
            stamp = entry.name.split(".")[1]
            if stamp.isdigit():
                yield int(stamp), entry

    # -- reading -----------------------------------------------------------

    def open(
        self, repo: str, generation: int, weights: tuple[tuple[float, ...], tuple[float, ...]]
    ) -> RepoSegments | None:
        """The repository's segments at `generation`, mapped; None when there is no valid file."""
        path = self.path(repo, generation)
        try:
            with path.open("rb") as handle:
                header = read_header(handle)
                if header is None:
                    log.warning("segment file %s is damaged; rebuilding it", path.name)
                    return None
                if not self._matches(header, repo, generation, weights):
                    log.info("segment file %s is stale; rebuilding it", path.name)
                    return None
                size = os.fstat(handle.fileno()).st_size
                if size != header.get("size"):
                    log.warning("segment file %s is truncated; rebuilding it", path.name)
                    return None
                if not checksums_match(handle, header):
                    log.warning("segment file %s fails its checksums; rebuilding it", path.name)
                    return None
                mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if size else None
        except FileNotFoundError:
            return None
        except OSError as exc:
            log.warning("segment file %s unreadable (%s); rebuilding it", path.name, exc)
            return None
        try:
            found = segments_of(repo, generation, header, mapped)
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            log.warning("segment file %s is damaged (%s); rebuilding it", path.name, exc)
            return None
        self.opened += 1
        return found

    def _matches(
        self,
        header: Mapping[str, Any],
        repo: str,
        generation: int,
        weights: tuple[tuple[float, ...], tuple[float, ...]],
    ) -> bool:
        wanted = [list(weights[0]), list(weights[1])]
        return (
            header.get("uid") == self.uid
            and header.get("repo") == repo
            and header.get("generation") == generation
            and header.get("weights") == wanted
        )

    # -- writing -----------------------------------------------------------

    def write(
        self, found: RepoSegments, weights: tuple[tuple[float, ...], tuple[float, ...]]
    ) -> bool:
        """Write atomically and drop the repository's older generations; False if it failed."""
        arrays = arrays_of(found)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            target = self.path(found.repo, found.generation)
            fd, temp = tempfile.mkstemp(prefix=".writing-", suffix=SUFFIX, dir=self.directory)
            try:
                with os.fdopen(fd, "wb") as handle:
                    write_file(handle, self._header(found, weights), arrays)
                    handle.flush()
                    os.fsync(handle.fileno())
                Path(temp).replace(target)
            except BaseException:
                Path(temp).unlink(missing_ok=True)
                raise
            _fsync_dir(self.directory)
        except OSError as exc:  # a read-only or full disk: searches still work, from memory
            log.warning("could not write the segment file of %s: %s", found.repo, exc)
            return False
        self.remove(found.repo, keep=found.generation)
        return True

    def _header(
        self, found: RepoSegments, weights: tuple[tuple[float, ...], tuple[float, ...]]
    ) -> dict[str, Any]:
        return {
            "uid": self.uid,
            "repo": found.repo,
            "generation": found.generation,
            "weights": [list(weights[0]), list(weights[1])],
            "views": [list(k) for k in found.chunks.views],
        }

    def remove(self, repo: str, *, keep: int | None = None) -> int:
        """Delete the repository's files (all but generation `keep` when given)."""
        return self._unlink(entry for stamp, entry in self._generations(repo) if stamp != keep)

    def sweep(self, current: Mapping[str, int]) -> int:
        """Delete files of repositories or generations not in `current` (repo -> stamp), and
        temporary files a crashed writer left over an hour ago."""
        wanted = {self.path(repo, stamp).name for repo, stamp in current.items()}
        try:
            entries = list(self.directory.iterdir())
        except OSError:
            return 0
        old = time.time() - STALE_TEMP_SECONDS
        return self._unlink(
            entry
            for entry in entries
            if (
                entry.suffix == SUFFIX
                and not entry.name.startswith(".")
                and entry.name not in wanted
            )
            or (entry.name.startswith(".writing-") and _mtime(entry) < old)
        )

    @staticmethod
    def _unlink(entries: Iterable[Path]) -> int:
        removed = 0
        for entry in entries:
            try:
                entry.unlink()  # a process still mapping it keeps its pages until it lets go
                removed += 1
            except OSError as exc:
                log.debug("could not remove %s: %s", entry, exc)
        return removed


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return float("inf")


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return  # not every platform opens directories
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
