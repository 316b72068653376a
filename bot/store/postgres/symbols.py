"""The symbol table in PostgreSQL (`SymbolTable`): the same answers as `bot.store.symbols.
table.SymbolStore`, shared by every process.

`sym_files` holds each file's packed references (`bot.symbols.packed`) and `folded`,
its distinct names case-folded, under a GIN index: the files that may refer to a
name are one index lookup, and the packed names decide exact and any-case matches
as in SQLite. `sym_defs.name_key` is the name with ASCII letters lowered, SQLite's
NOCASE, so the definitions found ignoring case are the same. `apply` is one
transaction of binary COPYs; `sym_generations` is bumped by every write, so the ranking
cached here is dropped when any process writes the repository.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, TypeVar

from bot.store.postgres.connection import Database
from bot.store.postgres.symbol_reads import (
    ALIAS_COLUMNS,
    DEF_COLUMNS,
    candidates,
    collect,
    count,
    file_facts,
    rank_repo,
    repo_paths,
    row_alias,
    row_def,
    scope,
)
from bot.store.symbols import lookup
from bot.symbols.model import (
    FileFacts,
    FileSymbols,
    RankedSymbol,
    SymbolAlias,
    SymbolDef,
    SymbolRef,
)
from bot.symbols.packed import PackedSymbols

if TYPE_CHECKING:
    import psycopg

    Conn = psycopg.Connection[tuple[object, ...]]

T = TypeVar("T")

_RANK_CACHE = 1000
# COPY in binary: the packed bytes go as they are (as text, megabytes of hex to write and
# parse); measured on the stdlib, the rows took 0.22 s of client time as text, 0.12 s so.
_FILE_TYPES = ("int8", "text", "text", "text", "text", "bytea", "bytea", "text[]", "bytea", "text")
_DEF_TYPES = ("int8", "int4", "text", "text", "text", "text", "int4", "int4")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
# A file's definitions and aliases go with it, in the same statement: sym_defs has no
# foreign key (schema version 6: its per-row check doubled an ingest), nor has sym_aliases,
# so this is the CASCADE.
_DELETE_FILES = "WITH gone AS (DELETE FROM sym_files WHERE repo = %s"
_DELETE_DEFS = (
    " RETURNING fid), defs AS (DELETE FROM sym_defs WHERE fid IN (SELECT fid FROM gone)) "
    "DELETE FROM sym_aliases WHERE fid IN (SELECT fid FROM gone)"
)
_ALIAS_TYPES = ("int8", "int4", "text", "text", "text", "text", "text", "text", "int4", "int4")


class PostgresSymbols:
    def __init__(self, database: Database) -> None:
        self._db = database
        self._ranked: dict[str, tuple[int, list[RankedSymbol]]] = {}
        self._lock = threading.Lock()

    def close(self) -> None:
        """The pool belongs to the store set (closed with it)."""

    # -- the ingest side ---------------------------------------------------------------

    def blobs(self, repo: str) -> dict[str, str]:
        rows = self._db.read(
            lambda c: c.execute(
                "SELECT path, blob FROM sym_files WHERE repo = %s", (repo,)
            ).fetchall()
        )
        return {str(path): str(blob) for path, blob in rows}

    def apply(
        self,
        repo: str,
        files: Sequence[tuple[str, str, FileSymbols | PackedSymbols]],
        removed: Sequence[str] = (),
        *,
        commit: str | None = None,
    ) -> None:
        latest = {path: (key, _packed(symbols)) for path, key, symbols in files}
        gone = sorted({*removed, *latest})

        def write(c: Conn) -> None:
            if gone:
                c.execute(_DELETE_FILES + " AND path = ANY(%s)" + _DELETE_DEFS, (repo, gone))
            fids = [
                int(str(r[0]))
                for r in c.execute(
                    "SELECT nextval('sym_files_fid_seq') FROM generate_series(1, %s)",
                    (len(latest),),
                )
            ]
            with c.cursor().copy(
                "COPY sym_files (fid, repo, path, blob, names, offsets, sites, folded, forms, "
                "links) FROM STDIN (FORMAT BINARY)"
            ) as copy:
                copy.set_types(_FILE_TYPES)
                for fid, (path, (key, p)) in zip(fids, latest.items(), strict=True):
                    folded = sorted({n.casefold() for n in p.names.split()})
                    row = (fid, repo, path, key, p.names, p.offsets, p.sites, folded)
                    copy.write_row((*row, p.forms, p.links))
            with c.cursor().copy(
                "COPY sym_defs (fid, seq, name, name_key, symbol, kind, start_line, end_line) "
                "FROM STDIN (FORMAT BINARY)"
            ) as copy:
                copy.set_types(_DEF_TYPES)
                for fid, (_, (_, p)) in zip(fids, latest.items(), strict=True):
                    for seq, (name, symbol, kind, start, end) in enumerate(p.defs):
                        key = name.translate(_ASCII_LOWER)
                        copy.write_row((fid, seq, name, key, symbol, kind, start, end))
            with c.cursor().copy(
                "COPY sym_aliases (fid, seq, name, name_key, kind, target, module, owner, "
                "start_line, end_line) FROM STDIN (FORMAT BINARY)"
            ) as copy:
                copy.set_types(_ALIAS_TYPES)
                for fid, (_, (_, p)) in zip(fids, latest.items(), strict=True):
                    for seq, (name, *rest) in enumerate(p.aliases):
                        copy.write_row((fid, seq, name, name.translate(_ASCII_LOWER), *rest))
            if commit is not None:
                c.execute(
                    "INSERT INTO sym_commits VALUES (%s, %s) ON CONFLICT (repo) DO UPDATE "
                    "SET commit_sha = excluded.commit_sha",
                    (repo, commit),
                )
            _bump(c, repo)

        self._db.run(write)
        with self._lock:
            self._ranked.pop(repo, None)

    def remove_repo(self, repo: str) -> None:
        def write(c: Conn) -> None:
            c.execute(_DELETE_FILES + _DELETE_DEFS, (repo,))
            c.execute("DELETE FROM sym_commits WHERE repo = %s", (repo,))
            _bump(c, repo)

        self._db.run(write)
        with self._lock:
            self._ranked.pop(repo, None)

    # -- reads ---------------------------------------------------------------------------

    def repos(self) -> list[str]:
        rows = self._db.read(
            lambda c: c.execute("SELECT DISTINCT repo FROM sym_files ORDER BY repo").fetchall()
        )
        return [str(r[0]) for r in rows]

    def commits(self) -> dict[str, str]:
        rows = self._db.read(
            lambda c: c.execute("SELECT repo, commit_sha FROM sym_commits").fetchall()
        )
        return {str(repo): str(sha) for repo, sha in rows}

    def definitions(
        self, name: str, *, repos: frozenset[str] | None, limit: int = 20
    ) -> list[SymbolDef]:
        query = name.strip()
        last = query.rpartition(".")[2]
        if not last or limit <= 0 or (repos is not None and not repos):
            return []
        where, params = scope(repos)
        sql = (
            f"SELECT {DEF_COLUMNS}, d.name = %s FROM sym_defs d JOIN sym_files f "
            f"ON f.fid = d.fid WHERE d.name_key = %s{where}"
        )
        rows = self._db.read(
            lambda c: c.execute(sql, [last, last.translate(_ASCII_LOWER), *params]).fetchall()
        )
        return lookup.best_definitions(
            query, lambda folded: [row_def(r[:7]) for r in rows if folded or r[7]], limit
        )

    def aliases(
        self, name: str, *, repos: frozenset[str] | None, limit: int = 50
    ) -> list[SymbolAlias]:
        last = name.strip().rpartition(".")[2]
        if not last or limit <= 0 or (repos is not None and not repos):
            return []
        where, params = scope(repos)
        sql = (
            f"SELECT {ALIAS_COLUMNS}, a.name = %s FROM sym_aliases a JOIN sym_files f "
            f"ON f.fid = a.fid WHERE a.name_key = %s{where} "
            "ORDER BY f.repo, f.path, a.start_line, a.seq"
        )
        rows = self._db.read(
            lambda c: c.execute(sql, [last, last.translate(_ASCII_LOWER), *params]).fetchall()
        )
        for folded in (False, True):
            found = [row_alias(r[:9]) for r in rows if folded or r[9]]
            if found:
                return found[:limit]
        return []

    def references(
        self,
        name: str,
        *,
        repos: frozenset[str] | None,
        calls_only: bool = False,
        limit: int = 50,
    ) -> list[SymbolRef]:
        last = name.strip().rpartition(".")[2]
        if not last or limit <= 0 or (repos is not None and not repos):
            return []

        def read(c: Conn) -> list[SymbolRef]:
            found_files = candidates(c, last, repos)
            for folded in (False, True):
                found = collect(c, found_files, last, folded, calls_only, limit)
                if found:
                    return found
            return []

        return self._db.read(lambda c: _in_snapshot(c, read))

    def reference_count(
        self, name: str, *, repos: frozenset[str] | None, calls_only: bool = False
    ) -> int:
        last = name.strip().rpartition(".")[2]
        if not last or (repos is not None and not repos):
            return 0

        def read(c: Conn) -> int:
            found_files = candidates(c, last, repos)
            for folded in (False, True):
                total = count(found_files, last, folded, calls_only)
                if total:
                    return total
            return 0

        return self._db.read(read)

    def top_symbols(self, repo: str, *, limit: int = 30) -> list[RankedSymbol]:
        if limit <= 0:
            return []

        def cached(c: Conn) -> tuple[int, list[RankedSymbol] | None]:
            generation = _generation(c, repo)
            with self._lock:
                found = self._ranked.get(repo)
            if found is not None and found[0] == generation and limit <= _RANK_CACHE:
                return generation, found[1]
            return generation, None

        def ranked_now(c: Conn) -> tuple[int, list[RankedSymbol]]:
            return _generation(c, repo), rank_repo(c, repo)

        # The generation alone (one statement) while the ranking cached is current.
        generation, ranked = self._db.read(cached)
        if ranked is None:
            generation, ranked = self._db.read(lambda c: _in_snapshot(c, ranked_now))
        with self._lock:
            self._ranked[repo] = (generation, ranked[:_RANK_CACHE])
        return ranked[:limit]

    def file_facts(self, repo: str, paths: Iterable[str]) -> dict[str, FileFacts]:
        wanted = sorted(set(paths))
        return self._db.read(lambda c: _in_snapshot(c, lambda s: file_facts(s, repo, wanted)))

    def paths(self, repo: str) -> list[str]:
        return self._db.read(lambda c: repo_paths(c, repo))

    def stats(self, repo: str | None = None) -> tuple[int, int]:
        where, params = ("WHERE f.repo = %s", [repo]) if repo is not None else ("", [])

        def read(c: Conn) -> tuple[int, int]:
            row = c.execute(  # one statement: one snapshot
                f"SELECT (SELECT count(*) FROM sym_defs d JOIN sym_files f ON f.fid = d.fid "
                f"{where}), (SELECT COALESCE(SUM(octet_length(f.sites)), 0) / 4 "
                f"FROM sym_files f {where})",
                params * 2,
            ).fetchone()
            assert row is not None
            return int(str(row[0])), int(str(row[1]))

        return self._db.read(read)


def _packed(symbols: FileSymbols | PackedSymbols) -> PackedSymbols:
    if isinstance(symbols, PackedSymbols):
        return symbols
    return PackedSymbols.from_file_symbols(symbols)


def _in_snapshot(c: Conn, read: Callable[[Conn], T]) -> T:
    """`read(c)` in one REPEATABLE READ, READ ONLY transaction: its statements see one
    state of the table. The isolation goes with the BEGIN (no round trip of its own)."""
    from psycopg import IsolationLevel

    c.isolation_level, c.read_only = IsolationLevel.REPEATABLE_READ, True
    try:
        with c.transaction():
            return read(c)
    finally:
        c.isolation_level = c.read_only = None


def _generation(c: Conn, repo: str) -> int:
    row = c.execute("SELECT generation FROM sym_generations WHERE repo = %s", (repo,)).fetchone()
    return int(str(row[0])) if row else 0


def _bump(c: Conn, repo: str) -> None:
    c.execute(
        "INSERT INTO sym_generations VALUES (%s, 1) ON CONFLICT (repo) "
        "DO UPDATE SET generation = sym_generations.generation + 1",
        (repo,),
    )
