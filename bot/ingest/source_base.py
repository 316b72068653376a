"""What every repository source shares: its files, its checkout, and reading them once.

Content checks (binary, generated, minified...) need the bytes, so `files()`
reads each candidate once; the kept bytes are held (up to a budget) for the
`read_text`/`read_many` calls that usually follow, so nothing is read twice.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.ingest import filters

# Content verdicts by blob, shared by every git source: a re-ingest reads only new blobs.
MEMO = filters.VerdictMemo(100_000)
CACHE_BYTES = 128 << 20  # file contents kept between files() and read_many()


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: str  # repo-relative, posix
    blob: str  # git blob sha; for plain directories the git-compatible sha of the content
    size: int


@dataclass(frozen=True, slots=True)
class Checkout:
    name: str
    root: Path
    commit: str  # "" for a plain directory
    branch: str
    source: str  # URL without credentials, or the absolute local path
    web_url: str  # https web URL for permalinks, "" if unknown or local


@dataclass(frozen=True, slots=True)
class Entry:
    """A listing row before filtering. `blob` is "" when unknown until read."""

    path: str
    blob: str
    size: int
    kind: str  # file, symlink, submodule, special, or why the entry cannot be listed


@dataclass(frozen=True, slots=True)
class SourceOptions:
    max_file_bytes: int
    include: filters.PathPatterns
    exclude: filters.PathPatterns


def git_blob_sha(data: bytes) -> str:
    """The sha git would give `data` as a blob, so plain directories get comparable ids."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


class Source(ABC):
    """Files of one repository at one commit (or a directory as it is now).

    One thread at a time: a source owns one `git cat-file` process.
    """

    def __init__(self, checkout: Checkout, options: SourceOptions) -> None:
        self.checkout = checkout
        self._options = options
        self._skipped: Counter[str] = Counter()
        self._cache: dict[str, tuple[str, bytes]] = {}  # path -> (blob, bytes)
        self._cached_bytes = 0
        self._memo: filters.VerdictMemo | None = None  # set where blob ids name the content

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Drop cached contents and stop helper processes; the source can be used again."""
        self._cache.clear()
        self._cached_bytes = 0

    def files(self) -> Iterator[SourceFile]:
        """The files to index, sorted by path; `skipped()` is complete once this is exhausted."""
        self._skipped = Counter()
        self.close()
        candidates = []
        for entry in self._entries():
            reason = self._listing_reason(entry)
            if reason is None:
                candidates.append(entry)
            else:
                self._skipped[reason] += 1
        memo = self._memo
        known = [memo.lookup(memo_key(e)) if memo else (False, None) for e in candidates]
        contents = self._contents(
            [e for e, (hit, _) in zip(candidates, known, strict=True) if not hit]
        )
        for entry, (hit, verdict) in zip(candidates, known, strict=True):
            data = None
            if not hit:
                data = next(contents)
                verdict = "unreadable" if data is None else self._content_reason(entry, data)
                if memo and data is not None:
                    memo.put(memo_key(entry), verdict)
            if verdict is not None:
                self._skipped[verdict] += 1
                continue
            if data is None:  # content verdict remembered from an earlier listing
                yield SourceFile(entry.path, entry.blob, entry.size)
                continue
            found = SourceFile(entry.path, entry.blob or git_blob_sha(data), len(data))
            self._remember(found, data)
            yield found

    def skipped(self) -> Counter[str]:
        return Counter(self._skipped)

    def read_text(self, f: SourceFile) -> str:
        return next(self.read_many([f]))[1]

    def read_many(self, files: Sequence[SourceFile]) -> Iterator[tuple[SourceFile, str]]:
        """(file, text) in the given order; one streaming reader for everything not cached."""
        held = [self._take(f) for f in files]
        stream = self._read([f for f, data in zip(files, held, strict=True) if data is None])
        for i, f in enumerate(files):
            data, held[i] = held[i], None  # let each file's bytes go once it is read
            yield f, decode(data if data is not None else next(stream))
            del data

    def _listing_reason(self, entry: Entry) -> str | None:
        if entry.kind != "file":
            return entry.kind
        opts = self._options
        if (opts.include and not opts.include.matches(entry.path)) or (
            opts.exclude and opts.exclude.matches(entry.path)
        ):
            return "excluded"
        return filters.skip_reason(entry.path, entry.size, max_file_bytes=opts.max_file_bytes)

    def _content_reason(self, entry: Entry, data: bytes) -> str | None:
        if len(data) > self._options.max_file_bytes:
            return "too_large"  # a plain file that grew since it was listed
        return filters.content_reason(entry.path, data)

    def _remember(self, f: SourceFile, data: bytes) -> None:
        if self._cached_bytes + len(data) <= CACHE_BYTES:
            self._cache[f.path] = (f.blob, data)
            self._cached_bytes += len(data)

    def _take(self, f: SourceFile) -> bytes | None:
        held = self._cache.get(f.path)
        if held is None or held[0] != f.blob:
            return None
        del self._cache[f.path]
        self._cached_bytes -= len(held[1])
        return held[1]

    @abstractmethod
    def _entries(self) -> Iterator[Entry]:
        """Every entry of the tree, sorted by path."""

    @abstractmethod
    def _contents(self, entries: Sequence[Entry]) -> Iterator[bytes | None]:
        """Bytes of each entry in order; None for one that can no longer be read."""

    @abstractmethod
    def _read(self, files: Sequence[SourceFile]) -> Iterator[bytes]:
        """Bytes of each file, in order."""


def decode(data: bytes) -> str:
    return data.decode("utf-8", "replace").removeprefix("\ufeff")


def memo_key(entry: Entry) -> str:
    return f"{entry.blob}:{entry.path.rsplit('/', 1)[-1]}"
