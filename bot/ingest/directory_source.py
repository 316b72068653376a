"""A plain directory as a repository source: walked, never following symlinks."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator, Sequence

from bot.errors import SourceError
from bot.ingest import filters
from bot.ingest.source_base import Checkout, Entry, Source, SourceFile, SourceOptions

log = logging.getLogger(__name__)


class DirectorySource(Source):
    """A plain directory, walked without following symlinks; a top-level .gitignore applies."""

    def __init__(self, checkout: Checkout, options: SourceOptions) -> None:
        super().__init__(checkout, options)
        self._root = str(checkout.root)  # joined as text: Path's `/` costs more, per file
        gitignore = checkout.root / ".gitignore"
        readable = gitignore.is_file() and not gitignore.is_symlink()
        lines = gitignore.read_text("utf-8", "replace").splitlines() if readable else []
        self._ignore = filters.IgnoreRules(lines)

    def _entries(self) -> Iterator[Entry]:
        found: list[Entry] = []
        pending = [""]
        while pending:
            rel = pending.pop()
            try:
                listing = list(os.scandir(f"{self._root}/{rel}"))
            except OSError as exc:
                log.warning("cannot list %s: %s", rel or ".", exc.strerror)
                self._skipped["unreadable"] += 1
                continue
            for item in listing:
                path = f"{rel}/{item.name}" if rel else item.name
                entry = self._classify(item, path)
                if entry is None:
                    continue
                if entry.kind == "dir":
                    pending.append(path)
                else:
                    found.append(entry)
        found.sort(key=lambda e: e.path)
        return iter(found)

    def _classify(self, item: os.DirEntry[str], path: str) -> Entry | None:
        try:
            info = item.stat(follow_symlinks=False)
        except OSError:
            return Entry(path, "", 0, "unreadable")
        is_dir = stat.S_ISDIR(info.st_mode)
        if self._ignore.ignored(path, is_dir) or (is_dir and filters.tool_dir(item.path)):
            return None
        try:
            path.encode("utf-8")
        except UnicodeEncodeError:
            shown = path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            return Entry(shown, "", 0, "bad_path")
        if stat.S_ISLNK(info.st_mode):
            return Entry(path, "", 0, "symlink")
        if is_dir:
            return Entry(path, "", 0, "dir")
        kind = "file" if stat.S_ISREG(info.st_mode) else "special"
        return Entry(path, "", info.st_size, kind)

    def _contents(self, entries: Sequence[Entry]) -> Iterator[bytes | None]:
        for entry in entries:
            yield self._read_path(entry.path)

    def _read(self, files: Sequence[SourceFile]) -> Iterator[bytes]:
        for f in files:
            data = self._read_path(f.path)
            if data is None:
                raise SourceError(f"{f.path} can no longer be read from {self.checkout.root}.")
            yield data

    def _read_path(self, path: str) -> bytes | None:
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        try:
            fd = os.open(f"{self._root}/{path}", flags)
        except OSError as exc:
            log.warning("cannot read %s: %s", path, exc.strerror)
            return None
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            return handle.read(self._options.max_file_bytes + 1)
