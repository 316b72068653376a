"""The symbol and reference table: where each name is defined and used, per repository.

    store = SymbolStore(path)                                  # one SQLite file (WAL)
    store.apply(repo, [(path, blob_key, symbols)], removed, commit=sha)  # one transaction
    store.commits()                                            # repo -> commit the rows match
    store.definitions("Session.send", repos=None)              # exact, then any case
    store.aliases("stringify", repos=None)                     # re-exports, run-time members
    store.references("send", repos=frozenset({"api"}), calls_only=True)
    store.top_symbols("api")                                   # see `ranking`
    store.file_facts("api", ["api/models.py"])                 # definitions, imports, bases
    store.paths("api")                                         # what module names resolve to

Rows are keyed by repository, so a scope never sees another's rows;
`repos=None` means every repository. Names match exactly first and, only when
nothing matches, ignoring case. A qualified name ("Session.send",
"models.Session") matches a definition whose symbol, or module path plus
symbol, ends with it at a dot; references are recorded by their last segment
and are looked up by it.

Writes hold a lock and one transaction. Reads of a file use one connection per
thread, inside a read transaction (`bot.store.snapshots`), so they run beside a
write (WAL) and see one committed state. A damaged file, found at opening or by
any read or write, is set aside and started afresh (`bot.store.sqlite`); the read
or write that found it fails (StoreError: answers fall back to search), and the
next ingest finds every file's symbols missing and refills the table. Other
failures are StoreError.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from bot.errors import StoreError
from bot.store.snapshots import SnapshotReaders
from bot.store.sqlite import SqliteFile
from bot.store.symbols import lookup, schema
from bot.symbols.model import (
    FileFacts,
    FileSymbols,
    RankedSymbol,
    SymbolAlias,
    SymbolDef,
    SymbolRef,
)
from bot.symbols.packed import PackedSymbols

log = logging.getLogger(__name__)

_RANK_CACHE = 1000  # ranked symbols kept per repository between writes
_REFILL = "symbol answers fall back to search until the next reindex refills it"


class SymbolStore:
    def __init__(self, path: Path) -> None:
        self._path: Path | None = path
        self._setup()

    @classmethod
    def in_memory(cls) -> SymbolStore:
        """A private in-memory table (one connection, every call under the lock)."""
        store = cls.__new__(cls)
        store._path = None
        store._setup()
        return store

    def _setup(self) -> None:
        self._lock = threading.Lock()
        self._ranked: dict[str, tuple[tuple[int, int], list[RankedSymbol]]] = {}
        self._closed = False
        self._file: SqliteFile | None = None
        self._snapshots: SnapshotReaders | None = None
        if self._path is not None:
            self._file = SqliteFile(
                self._path, "symbol table", schema.ensure_schema, remedy=_REFILL
            )
            self._snapshots = SnapshotReaders(self._file)
            return
        try:
            self._db = schema.connect(":memory:")
            schema.ensure_schema(self._db)
        except sqlite3.Error as exc:
            raise StoreError("The symbol table could not be opened.", detail=str(exc)) from exc

    # -- the ingest side ---------------------------------------------------------------

    def blobs(self, repo: str) -> dict[str, str]:
        """path -> the blob key recorded with its symbols, for every file of `repo`."""
        with self._reading() as db:
            rows = db.execute("SELECT path, blob FROM files WHERE repo = ?", (repo,)).fetchall()
        return {str(path): str(blob) for path, blob in rows}

    def apply(
        self,
        repo: str,
        files: Sequence[tuple[str, str, FileSymbols | PackedSymbols]],
        removed: Sequence[str] = (),
        *,
        commit: str | None = None,
    ) -> None:
        """Replace the symbols of `files` (path, blob key, symbols), drop `removed`, and
        record `commit` as the indexed commit the repository's rows now match: atomic."""
        latest = {path: (key, _packed(symbols)) for path, key, symbols in files}
        gone = [(repo, path) for path in {*removed, *latest}]
        with self._writing() as db:
            db.executemany("DELETE FROM files WHERE repo = ? AND path = ?", gone)
            first = int(db.execute("SELECT COALESCE(MAX(fid), 0) + 1 FROM files").fetchone()[0])
            rows = [
                (fid, repo, path, key, p.names, p.offsets, p.sites, p.forms, p.links)
                for fid, (path, (key, p)) in enumerate(latest.items(), start=first)
            ]
            db.executemany(
                "INSERT INTO files (fid, repo, path, blob, names, offsets, sites, forms, links) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            db.executemany(
                "INSERT INTO defs VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    (fid, seq, *row)
                    for fid, (_, (_, p)) in enumerate(latest.items(), start=first)
                    for seq, row in enumerate(p.defs)
                ),
            )
            db.executemany(
                "INSERT INTO aliases VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    (fid, seq, *row)
                    for fid, (_, (_, p)) in enumerate(latest.items(), start=first)
                    for seq, row in enumerate(p.aliases)
                ),
            )
            if commit is not None:
                db.execute(
                    "INSERT INTO commits (repo, commit_sha) VALUES (?, ?) "
                    "ON CONFLICT (repo) DO UPDATE SET commit_sha = excluded.commit_sha",
                    (repo, commit),
                )
            _bump(db, repo)
        self._ranked.pop(repo, None)
        log.debug("symbols of %s: %d files written, %d removed", repo, len(latest), len(removed))

    def remove_repo(self, repo: str) -> None:
        with self._writing() as db:
            db.execute("DELETE FROM files WHERE repo = ?", (repo,))
            db.execute("DELETE FROM commits WHERE repo = ?", (repo,))
            _bump(db, repo)
        self._ranked.pop(repo, None)

    # -- reads ---------------------------------------------------------------------------

    def repos(self) -> list[str]:
        with self._reading() as db:
            rows = db.execute("SELECT DISTINCT repo FROM files ORDER BY repo").fetchall()
        return [str(r[0]) for r in rows]

    def commits(self) -> dict[str, str]:
        """repo -> the indexed commit its rows match (see `apply`)."""
        with self._reading() as db:
            rows = db.execute("SELECT repo, commit_sha FROM commits").fetchall()
        return {str(repo): str(sha) for repo, sha in rows}

    def definitions(
        self, name: str, *, repos: frozenset[str] | None, limit: int = 20
    ) -> list[SymbolDef]:
        """Definitions named `name` (or whose qualified name ends with it), best first:
        classes and functions before impl/module/namespace blocks, then by repo, path, line.
        """
        query = name.strip()
        last = query.rpartition(".")[2]
        if not last or limit <= 0 or (repos is not None and not repos):
            return []
        with self._reading() as db:
            return lookup.best_definitions(
                query,
                lambda folded: lookup.definition_rows(db, last, repos, folded=folded),
                limit,
            )

    def aliases(
        self, name: str, *, repos: frozenset[str] | None, limit: int = 50
    ) -> list[SymbolAlias]:
        """The names bound without a definition (`Alias`) called `name` (its last segment),
        exact case first, any case only if none; by repo, path and line. `"*"` finds the
        re-exports of every name and the members made for names a file cannot list."""
        last = name.strip().rpartition(".")[2]
        if not last or limit <= 0 or (repos is not None and not repos):
            return []
        with self._reading() as db:
            for folded in (False, True):
                found = lookup.alias_rows(db, last, repos, folded=folded, limit=limit)
                if found:
                    return found
        return []

    def references(
        self,
        name: str,
        *,
        repos: frozenset[str] | None,
        calls_only: bool = False,
        limit: int = 50,
    ) -> list[SymbolRef]:
        """Uses of the name's last segment, by (repo, path, line); calls only if asked."""
        last = name.strip().rpartition(".")[2]
        if not last or limit <= 0 or (repos is not None and not repos):
            return []
        with self._reading() as db:
            candidates = lookup.candidate_files(db, last, repos)
            for folded in (False, True):
                found = lookup.collect_sites(db, candidates, last, folded, calls_only, limit)
                if found:
                    return found
        return []

    def reference_count(
        self, name: str, *, repos: frozenset[str] | None, calls_only: bool = False
    ) -> int:
        """How many references `references` would return without a limit."""
        last = name.strip().rpartition(".")[2]
        if not last or (repos is not None and not repos):
            return 0
        with self._reading() as db:
            candidates = lookup.candidate_files(db, last, repos)
            for folded in (False, True):
                total = lookup.count_sites(db, candidates, last, folded, calls_only)
                if total:
                    return total
        return 0

    def file_facts(self, repo: str, paths: Iterable[str]) -> dict[str, FileFacts]:
        """path -> the definitions and links of each of `paths` the table holds."""
        with self._reading() as db:
            return lookup.file_facts(db, repo, paths)

    def paths(self, repo: str) -> list[str]:
        """Every path of `repo` the table holds (what module names resolve against)."""
        with self._reading() as db:
            return lookup.repo_paths(db, repo)

    def top_symbols(self, repo: str, *, limit: int = 30) -> list[RankedSymbol]:
        """The definitions of `repo` that the rest of its code refers to most (see `ranking`)."""
        if limit <= 0:
            return []
        with self._reading() as db:
            row = db.execute("SELECT generation FROM generations WHERE repo = ?", (repo,))
            generation = (self._file_generation(), int((row.fetchone() or (0,))[0]))
            cached = self._ranked.get(repo)
            if cached is not None and cached[0] == generation and limit <= _RANK_CACHE:
                return cached[1][:limit]
            ranked = lookup.rank_repo(db, repo)
        self._ranked[repo] = (generation, ranked[:_RANK_CACHE])
        return ranked[:limit]

    def stats(self, repo: str | None = None) -> tuple[int, int]:
        """(definitions, references) in `repo`, or in every repository."""
        where, params = ("WHERE f.repo = ?", (repo,)) if repo is not None else ("", ())
        with self._reading() as db:
            defs = db.execute(
                f"SELECT COUNT(*) FROM defs d JOIN files f ON f.fid = d.fid {where}", params
            ).fetchone()[0]
            refs = db.execute(
                f"SELECT COALESCE(SUM(length(f.sites)), 0) / 4 FROM files f {where}", params
            ).fetchone()[0]
        return int(defs), int(refs)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._snapshots is not None:
                self._snapshots.close()
            if self._file is not None:
                self._file.close()
            else:
                self._db.close()

    # -- connections ---------------------------------------------------------------------

    def _file_generation(self) -> int:
        return self._file.generation if self._file is not None else 0

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        if self._file is not None:  # damage found here sets the file aside (see sqlite_files)
            with self._file.transaction() as db:
                yield db
            return
        with self._lock:
            try:
                with self._db:
                    yield self._db
            except sqlite3.Error as exc:
                raise StoreError("The symbol table could not be written.", detail=str(exc)) from exc

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        if self._snapshots is None:
            with self._lock, _read_errors():
                yield self._db
            return
        with self._snapshots.reading() as db:  # damage found here sets the file aside
            yield db


@contextmanager
def _read_errors() -> Iterator[None]:
    try:
        yield
    except sqlite3.Error as exc:
        raise StoreError("The symbol table could not be read.", detail=str(exc)) from exc


def _packed(symbols: FileSymbols | PackedSymbols) -> PackedSymbols:
    if isinstance(symbols, PackedSymbols):
        return symbols
    return PackedSymbols.from_file_symbols(symbols)


def _bump(db: sqlite3.Connection, repo: str) -> None:
    db.execute(
        "INSERT INTO generations (repo, generation) VALUES (?, 1) "
        "ON CONFLICT (repo) DO UPDATE SET generation = generation + 1",
        (repo,),
    )
