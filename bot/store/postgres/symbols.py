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
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from bot.store.postgres.connection import Database
from bot.store.symbols import lookup
from bot.store.symbols.ranking import FileNames, rank
from bot.symbols.model import FileSymbols, RankedSymbol, SymbolDef, SymbolRef
from bot.symbols.packed import CallerMap, PackedSymbols, site_codes, site_count

if TYPE_CHECKING:
    import psycopg

    Conn = psycopg.Connection[tuple[object, ...]]

T = TypeVar("T")

_RANK_CACHE = 1000
# COPY in binary: the packed bytes go as they are (as text, megabytes of hex to write and
# parse); measured on the stdlib, the rows took 0.22 s of client time as text, 0.12 s so.
_FILE_TYPES = ("int8", "text", "text", "text", "text", "bytea", "bytea", "text[]")
_DEF_TYPES = ("int8", "int4", "text", "text", "text", "text", "int4", "int4")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_DEF_COLUMNS = "f.repo, f.path, d.name, d.symbol, d.kind, d.start_line, d.end_line"
# A file's definitions go with it, in the same statement: sym_defs has no foreign key
# (schema version 6: its per-row check doubled an ingest), so this is the CASCADE.
_DELETE_FILES = "WITH gone AS (DELETE FROM sym_files WHERE repo = %s"
_DELETE_DEFS = " RETURNING fid) DELETE FROM sym_defs WHERE fid IN (SELECT fid FROM gone)"

Candidate = tuple[int, str, str, str, bytes, bytes]  # fid, repo, path, names, offsets, sites


def _scope(repos: frozenset[str] | None) -> tuple[str, list[object]]:
    return ("", []) if repos is None else (" AND f.repo = ANY(%s)", [sorted(repos)])


def _row_def(row: Sequence[object]) -> SymbolDef:
    repo, path, name, symbol, kind, start, end = row
    return SymbolDef(
        str(repo), str(path), str(name), str(symbol), str(kind), int(str(start)), int(str(end))
    )


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
                "COPY sym_files (fid, repo, path, blob, names, offsets, sites, folded) "
                "FROM STDIN (FORMAT BINARY)"
            ) as copy:
                copy.set_types(_FILE_TYPES)
                for fid, (path, (key, p)) in zip(fids, latest.items(), strict=True):
                    folded = sorted({n.casefold() for n in p.names.split()})
                    copy.write_row((fid, repo, path, key, p.names, p.offsets, p.sites, folded))
            with c.cursor().copy(
                "COPY sym_defs (fid, seq, name, name_key, symbol, kind, start_line, end_line) "
                "FROM STDIN (FORMAT BINARY)"
            ) as copy:
                copy.set_types(_DEF_TYPES)
                for fid, (_, (_, p)) in zip(fids, latest.items(), strict=True):
                    for seq, (name, symbol, kind, start, end) in enumerate(p.defs):
                        key = name.translate(_ASCII_LOWER)
                        copy.write_row((fid, seq, name, key, symbol, kind, start, end))
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
        scope, params = _scope(repos)
        sql = (
            f"SELECT {_DEF_COLUMNS}, d.name = %s FROM sym_defs d JOIN sym_files f "
            f"ON f.fid = d.fid WHERE d.name_key = %s{scope}"
        )
        rows = self._db.read(
            lambda c: c.execute(sql, [last, last.translate(_ASCII_LOWER), *params]).fetchall()
        )
        return lookup.best_definitions(
            query, lambda folded: [_row_def(r[:7]) for r in rows if folded or r[7]], limit
        )

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
            candidates = _candidates(c, last, repos)
            for folded in (False, True):
                found = _collect(c, candidates, last, folded, calls_only, limit)
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
            candidates = _candidates(c, last, repos)
            for folded in (False, True):
                total = _count(candidates, last, folded, calls_only)
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
            return _generation(c, repo), _rank_repo(c, repo)

        # The generation alone (one statement) while the ranking cached is current.
        generation, ranked = self._db.read(cached)
        if ranked is None:
            generation, ranked = self._db.read(lambda c: _in_snapshot(c, ranked_now))
        with self._lock:
            self._ranked[repo] = (generation, ranked[:_RANK_CACHE])
        return ranked[:limit]

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


def _bytes(value: object) -> bytes:
    assert isinstance(value, bytes | memoryview)
    return bytes(value)


def _candidates(c: Conn, last: str, repos: frozenset[str] | None) -> list[Candidate]:
    """Files naming `last` in any case, by repo and path (a superset of the matches)."""
    scope, params = _scope(repos)
    rows = c.execute(
        "SELECT f.fid, f.repo, f.path, f.names, f.offsets, f.sites FROM sym_files f "
        f"WHERE f.folded @> ARRAY[%s]::text[]{scope} ORDER BY f.repo, f.path",
        [last.casefold(), *params],
    ).fetchall()
    return [
        (int(str(r[0])), str(r[1]), str(r[2]), str(r[3]), _bytes(r[4]), _bytes(r[5])) for r in rows
    ]


def _indexes(names: str, last: str, folded: bool) -> list[int]:
    from bot.symbols.packed import folded_indexes, name_index

    if folded:
        return folded_indexes(names, last)
    at = name_index(names, last)
    return [at] if at >= 0 else []


def _collect(
    c: Conn, candidates: list[Candidate], last: str, folded: bool, calls_only: bool, limit: int
) -> list[SymbolRef]:
    picked: list[tuple[int, str, str, list[tuple[int, str, bool]]]] = []  # files, in order
    total = 0
    for fid, repo, path, names, offsets, sites in candidates:
        indexes = _indexes(names, last, folded)
        if not indexes:
            continue
        written = names.split() if folded else []
        found = sorted(
            (code >> 1, written[i] if folded else last, bool(code & 1))
            for i in indexes
            for code in site_codes(offsets, sites, i)
            if code & 1 or not calls_only
        )
        if found:
            picked.append((fid, repo, path, found))
            total += len(found)
            if total >= limit:
                break
    if not picked:
        return []
    # The definitions of every file picked, in one query (their callers: which def holds a line).
    defs: dict[int, list[SymbolDef]] = {fid: [] for fid, *_ in picked}
    rows = c.execute(
        f"SELECT d.fid, {_DEF_COLUMNS} FROM sym_defs d JOIN sym_files f ON f.fid = d.fid "
        "WHERE d.fid = ANY(%s) ORDER BY d.fid, d.seq",
        (list(defs),),
    ).fetchall()
    for row in rows:
        defs[int(str(row[0]))].append(_row_def(row[1:]))
    out: list[SymbolRef] = []
    for fid, repo, path, found in picked:
        callers = CallerMap(defs[fid])
        out.extend(
            SymbolRef(repo, path, name, line, callers.caller(line), call)
            for line, name, call in found
        )
    return out[:limit]


def _count(candidates: list[Candidate], last: str, folded: bool, calls_only: bool) -> int:
    total = 0
    for _fid, _repo, _path, names, offsets, sites in candidates:
        for i in _indexes(names, last, folded):
            if calls_only:
                total += sum(code & 1 for code in site_codes(offsets, sites, i))
            else:
                total += site_count(offsets, i)
    return total


def _rank_repo(c: Conn, repo: str) -> list[RankedSymbol]:
    rows = c.execute(
        f"SELECT d.fid, {_DEF_COLUMNS} FROM sym_defs d JOIN sym_files f ON f.fid = d.fid "
        "WHERE f.repo = %s ORDER BY d.fid, d.seq",
        (repo,),
    ).fetchall()
    definitions = [(int(str(r[0])), _row_def(r[1:])) for r in rows]
    files = [
        FileNames(int(str(fid)), frozenset(str(names).split()))
        for fid, names in c.execute(
            "SELECT fid, names FROM sym_files WHERE repo = %s ORDER BY fid", (repo,)
        )
    ]
    return rank(definitions, files)
