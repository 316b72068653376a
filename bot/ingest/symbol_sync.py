"""What one ingest does to a repository's symbol table (see `bot.ingest.pipeline`).

Each file's symbols are recorded with a key derived from the file's index key
(its blob and the pipeline version) and `SYMBOLS_VERSION`. A file needs symbol
work when its recorded key differs from its current one: it was re-chunked
(its symbols come from the same parse), or the table lost it or holds it from
an older extractor (it is read and parsed again, nothing else). Paths the table
knows but the source no longer lists are removed.

The table is a cache of the sources: when it cannot be read or written, that
is logged and the ingest goes on; the next one finds the keys stale and redoes
the work. Each write records the indexed commit the rows match, in the same
transaction; lookups use a repository's rows only while that commit is the
index's (see `bot.retrieval.symbol_facts`), so a crash or a failed write
between the index and the table never cites lines of another commit. A
repository that leaves the configuration leaves the index and the table
together (`Core.forget_repo`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence

from bot.code.languages import language_for
from bot.errors import BotError
from bot.ingest.secrets import scrub
from bot.ingest.sources import Source, SourceFile
from bot.models import FileEntry
from bot.store.base import SymbolTable
from bot.symbols.extract import extract_text
from bot.symbols.packed import PackedSymbols

log = logging.getLogger(__name__)

# Bumped when extraction changes, so every file's symbols are read again once.
SYMBOLS_VERSION = "4"

Progress = Callable[[str, int, int], None]  # (stage, done, total)


def symbols_key(file_key: str) -> str:
    """The key recorded with a file's symbols, from its index key."""
    return f"{SYMBOLS_VERSION}|{file_key}"


class SymbolSync:
    """Symbol work for one ingest of `repo`; does nothing without a store."""

    def __init__(self, store: SymbolTable | None, repo: str) -> None:
        self._store = store
        self._repo = repo
        self.found: list[tuple[str, str, PackedSymbols]] = []  # (path, key, symbols)
        self.recorded = self._recorded()
        self.recorded_commit = self._recorded_commit()

    @property
    def enabled(self) -> bool:
        return self._store is not None

    def _recorded(self) -> dict[str, str]:
        if self._store is None:
            return {}
        try:
            return self._store.blobs(self._repo)
        except BotError as exc:
            log.warning("symbol table unreadable: %s", exc.detail or exc.user_message)
            return {}

    def _recorded_commit(self) -> str | None:
        if self._store is None:
            return None
        try:
            return self._store.commits().get(self._repo)
        except BotError as exc:
            log.warning("symbol table unreadable: %s", exc.detail or exc.user_message)
            return None

    def complete(self, manifest: Mapping[str, FileEntry], commit: str) -> bool:
        """Whether the table holds current symbols for exactly the indexed files, recorded
        as matching the indexed `commit`."""
        recorded = self.recorded
        return self._store is None or (
            self.recorded_commit == commit
            and len(recorded) == len(manifest)
            and all(recorded.get(p) == symbols_key(e.blob) for p, e in manifest.items())
        )

    def add(self, path: str, file_key: str, symbols: PackedSymbols) -> None:
        """The symbols of a file just chunked (see `extract.analyze`)."""
        if self._store is not None:
            self.found.append((path, symbols_key(file_key), symbols))

    def read_missing(
        self,
        source: Source,
        files: Sequence[tuple[SourceFile, str]],
        progress: Progress | None = None,
    ) -> None:
        """Read and parse, for their symbols only, those of `files` (file, key) the table
        lacks or holds stale; call after `add` has seen every chunked file."""
        if self._store is None:
            return
        done_paths = {path for path, _, _ in self.found}
        todo = [
            (f, key)
            for f, key in files
            if f.path not in done_paths and self.recorded.get(f.path) != symbols_key(key)
        ]
        keys = dict((f.path, key) for f, key in todo)
        reads = source.read_many([f for f, _ in todo])
        for done, (f, raw) in enumerate(reads, start=1):
            text = scrub(raw, f.path).text  # the text the index holds, so lines agree
            found = extract_text(f.path, text, language_for(f.path) or "text")
            self.found.append((f.path, symbols_key(keys[f.path]), found))
            if progress is not None:
                progress("symbols", done, len(todo))

    def write(self, listed: Sequence[str], commit: str) -> bool:
        """Store what was found, drop recorded paths not in `listed` and record that the
        table matches the indexed `commit`. Never raises: False when the table could not
        be written (it then stays at its old commit, which lookups notice)."""
        if self._store is None:
            return True
        removed = sorted(set(self.recorded) - set(listed))
        if not (self.found or removed) and self.recorded_commit == commit:
            return True
        try:
            self._store.apply(self._repo, self.found, removed, commit=commit)
        except BotError as exc:
            log.warning("symbols of %s not stored: %s", self._repo, exc.detail or exc.user_message)
            return False
        return True
