"""The reads behind `PostgresSymbols`: candidate files, sites, counts, rankings, file facts.

Each function runs on a connection the caller holds (inside one snapshot where it
reads more than one statement). Sites are decoded as in SQLite
(`bot.store.symbols.lookup`), so both stores give the same answers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from bot.store.symbols.lookup import decode_sites, name_indexes
from bot.store.symbols.ranking import FileNames, rank
from bot.symbols.links import FileLinks
from bot.symbols.model import FileFacts, RankedSymbol, SymbolAlias, SymbolDef, SymbolRef
from bot.symbols.packed import CallerMap, site_codes, site_count

if TYPE_CHECKING:
    import psycopg

    Conn = psycopg.Connection[tuple[object, ...]]

T = TypeVar("T")

DEF_COLUMNS = "f.repo, f.path, d.name, d.symbol, d.kind, d.start_line, d.end_line"
ALIAS_COLUMNS = (
    "f.repo, f.path, a.name, a.kind, a.target, a.module, a.owner, a.start_line, a.end_line"
)

# fid, repo, path, names, offsets, sites, forms
Candidate = tuple[int, str, str, str, bytes, bytes, bytes]


def scope(repos: frozenset[str] | None) -> tuple[str, list[object]]:
    return ("", []) if repos is None else (" AND f.repo = ANY(%s)", [sorted(repos)])


def row_def(row: Sequence[object]) -> SymbolDef:
    repo, path, name, symbol, kind, start, end = row
    return SymbolDef(
        str(repo), str(path), str(name), str(symbol), str(kind), int(str(start)), int(str(end))
    )


def row_alias(row: Sequence[object]) -> SymbolAlias:
    repo, path, name, kind, target, module, owner, start, end = row
    texts = (str(repo), str(path), str(name), str(kind), str(target), str(module), str(owner))
    return SymbolAlias(*texts, int(str(start)), int(str(end)))


def _aliases(c: Conn, fids: list[int]) -> dict[int, list[SymbolAlias]]:
    """The aliases of every file in `fids`, in one query."""
    return _by_file(c, fids, f"{ALIAS_COLUMNS} FROM sym_aliases a", "a", row_alias)


def _by_file(
    c: Conn, fids: list[int], rows_from: str, alias: str, make: Callable[[Sequence[object]], T]
) -> dict[int, list[T]]:
    """`make` of each row of a per-file table (`rows_from`, aliased `alias`), by file, in
    one query; every file of `fids` is a key."""
    found: dict[int, list[T]] = {fid: [] for fid in fids}
    rows = c.execute(
        f"SELECT {alias}.fid, {rows_from} JOIN sym_files f ON f.fid = {alias}.fid "
        f"WHERE {alias}.fid = ANY(%s) ORDER BY {alias}.fid, {alias}.seq",
        (fids,),
    ).fetchall()
    for row in rows:
        found[int(str(row[0]))].append(make(row[1:]))
    return found


def _bytes(value: object) -> bytes:
    assert isinstance(value, bytes | memoryview)
    return bytes(value)


def candidates(c: Conn, last: str, repos: frozenset[str] | None) -> list[Candidate]:
    """Files naming `last` in any case, by repo and path (a superset of the matches)."""
    where, params = scope(repos)
    rows = c.execute(
        "SELECT f.fid, f.repo, f.path, f.names, f.offsets, f.sites, f.forms FROM sym_files f "
        f"WHERE f.folded @> ARRAY[%s]::text[]{where} ORDER BY f.repo, f.path",
        [last.casefold(), *params],
    ).fetchall()
    return [
        (int(str(r[0])), str(r[1]), str(r[2]), str(r[3]), _bytes(r[4]), _bytes(r[5]), _bytes(r[6]))
        for r in rows
    ]


def collect(
    c: Conn, found: list[Candidate], last: str, folded: bool, calls_only: bool, limit: int
) -> list[SymbolRef]:
    picked: list[tuple[int, str, str, list[tuple[int, str, bool, int]]]] = []  # files, in order
    total = 0
    for fid, repo, path, names, offsets, sites, forms in found:
        indexes = name_indexes(names, last, folded)
        if not indexes:
            continue
        at = decode_sites(names, offsets, sites, forms, indexes, last, folded, calls_only)
        if at:
            picked.append((fid, repo, path, at))
            total += len(at)
            if total >= limit:
                break
    if not picked:
        return []
    defs = _definitions(c, [fid for fid, *_ in picked])
    out: list[SymbolRef] = []
    for fid, repo, path, at in picked:
        callers = CallerMap(defs[fid])
        out.extend(
            SymbolRef(repo, path, name, line, callers.caller(line), call, form)
            for line, name, call, form in at
        )
    return out[:limit]


def _definitions(c: Conn, fids: list[int]) -> dict[int, list[SymbolDef]]:
    """The definitions of every file in `fids`, in one query."""
    return _by_file(c, fids, f"{DEF_COLUMNS} FROM sym_defs d", "d", row_def)


def count(found: list[Candidate], last: str, folded: bool, calls_only: bool) -> int:
    total = 0
    for _fid, _repo, _path, names, offsets, sites, _forms in found:
        for i in name_indexes(names, last, folded):
            if calls_only:
                total += sum(code & 1 for code in site_codes(offsets, sites, i))
            else:
                total += site_count(offsets, i)
    return total


def rank_repo(c: Conn, repo: str) -> list[RankedSymbol]:
    rows = c.execute(
        f"SELECT d.fid, {DEF_COLUMNS} FROM sym_defs d JOIN sym_files f ON f.fid = d.fid "
        "WHERE f.repo = %s ORDER BY d.fid, d.seq",
        (repo,),
    ).fetchall()
    definitions = [(int(str(r[0])), row_def(r[1:])) for r in rows]
    files = [
        FileNames(int(str(fid)), frozenset(str(names).split()))
        for fid, names in c.execute(
            "SELECT fid, names FROM sym_files WHERE repo = %s ORDER BY fid", (repo,)
        )
    ]
    return rank(definitions, files)


def file_facts(c: Conn, repo: str, paths: list[str]) -> dict[str, FileFacts]:
    rows = c.execute(
        "SELECT fid, path, links FROM sym_files WHERE repo = %s AND path = ANY(%s)",
        (repo, paths),
    ).fetchall()
    fids = [int(str(r[0])) for r in rows]
    defs, aliases = _definitions(c, fids), _aliases(c, fids)
    return {
        str(path): FileFacts(
            repo,
            str(path),
            tuple(defs[int(str(fid))]),
            FileLinks.from_text(str(links)),
            tuple(aliases[int(str(fid))]),
        )
        for fid, path, links in rows
    }


def repo_paths(c: Conn, repo: str) -> list[str]:
    return [str(r[0]) for r in c.execute("SELECT path FROM sym_files WHERE repo = %s", (repo,))]
