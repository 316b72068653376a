"""The SQL and decoding behind `SymbolStore`'s reads (one open connection, one snapshot).

Every function takes a connection inside the caller's read transaction. Names
are matched by `store`'s rules: references by the last segment of a dotted
name, through the full-text index (any case) and then the packed names
(exact case, or any case when nothing matched exactly).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath

from bot.store.symbols import schema
from bot.store.symbols.ranking import FileNames, rank
from bot.symbols.links import FileLinks
from bot.symbols.model import FileFacts, RankedSymbol, SymbolAlias, SymbolDef, SymbolRef
from bot.symbols.packed import (
    CallerMap,
    folded_indexes,
    name_index,
    site_codes,
    site_count,
    site_forms,
)

_TOKEN = re.compile(r"[\w" + re.escape(schema.NAME_CHARS) + r"]+")
_DEF_COLUMNS = "f.repo, f.path, d.name, d.symbol, d.kind, d.start_line, d.end_line"

Candidate = tuple[int, str, str, str, bytes]  # fid, repo, path, names, offsets
_BATCH = 500  # paths a statement asks for (SQLite allows 32766 parameters; keep it small)


def in_repos(repos: frozenset[str] | None) -> tuple[str, list[str]]:
    """An `AND f.repo IN (...)` clause and its parameters; nothing for every repository."""
    if repos is None:
        return "", []
    ordered = sorted(repos)
    return f" AND f.repo IN ({', '.join('?' * len(ordered))})", ordered


# -- definitions -------------------------------------------------------------------------


def definition_rows(
    db: sqlite3.Connection, last: str, repos: frozenset[str] | None, *, folded: bool
) -> list[SymbolDef]:
    """Definitions whose name is `last` (ignoring ASCII case when `folded`)."""
    # The name index ignores case: exact lookups filter what it finds.
    match = "d.name = ? COLLATE NOCASE" + ("" if folded else " AND d.name = ?")
    scope, params = in_repos(repos)
    rows = db.execute(
        f"SELECT {_DEF_COLUMNS} FROM defs d JOIN files f ON f.fid = d.fid WHERE {match}{scope}",
        [last, *([] if folded else [last]), *params],
    ).fetchall()
    return [SymbolDef(*row) for row in rows]


_ALIAS_COLUMNS = (
    "f.repo, f.path, a.name, a.kind, a.target, a.module, a.owner, a.start_line, a.end_line"
)


def alias_rows(
    db: sqlite3.Connection,
    name: str,
    repos: frozenset[str] | None,
    *,
    folded: bool,
    limit: int,
) -> list[SymbolAlias]:
    """Aliases called `name` (ignoring ASCII case when `folded`), by repo, path and line."""
    match = "a.name = ? COLLATE NOCASE" + ("" if folded else " AND a.name = ?")
    scope, params = in_repos(repos)
    rows = db.execute(
        f"SELECT {_ALIAS_COLUMNS} FROM aliases a JOIN files f ON f.fid = a.fid "
        f"WHERE {match}{scope} ORDER BY f.repo, f.path, a.start_line, a.seq LIMIT ?",
        [name, *([] if folded else [name]), *params, limit],
    ).fetchall()
    return [SymbolAlias(*row) for row in rows]


def _file_aliases(db: sqlite3.Connection, fid: int) -> tuple[SymbolAlias, ...]:
    rows = db.execute(
        f"SELECT {_ALIAS_COLUMNS} FROM aliases a JOIN files f ON f.fid = a.fid WHERE a.fid = ? "
        "ORDER BY a.seq",
        (fid,),
    ).fetchall()
    return tuple(SymbolAlias(*row) for row in rows)


# Containers (Rust impls, modules, namespaces) come after the classes and functions they hold.
LATER_KINDS = ("impl", "module", "namespace")


def best_definitions(
    query: str, candidates: Callable[[bool], Iterable[SymbolDef]], limit: int
) -> list[SymbolDef]:
    """The definitions `query` names, exact case first, any case only if none: classes and
    functions before containers, then by repo, path, line. `candidates(folded)` gives the
    rows a backend found for the query's last segment (any case when `folded`)."""
    found: list[SymbolDef] = []
    for folded in (False, True):
        found = [d for d in candidates(folded) if named(d, query, folded=folded)]
        if found:
            break
    found.sort(key=lambda d: (d.kind in LATER_KINDS, d.repo, d.path, d.start_line))
    return found[:limit]


def named(d: SymbolDef, query: str, *, folded: bool) -> bool:
    """Whether `d` is what `query` names: its name, or a dotted suffix of its qualified name."""

    def norm(s: str) -> str:
        return s.casefold() if folded else s

    wanted = norm(query)
    if "." not in wanted:
        return norm(d.name) == wanted
    module = PurePosixPath(d.path).with_suffix("")
    qualifiers = [d.symbol]
    for prefix in (module, module.parent):
        dotted = ".".join(p for p in prefix.parts if p != "__init__")
        if dotted:
            qualifiers.append(f"{dotted}.{d.symbol}")
    return any(norm(full) == wanted or norm(full).endswith("." + wanted) for full in qualifiers)


# -- references ----------------------------------------------------------------------------


def candidate_files(
    db: sqlite3.Connection, last: str, repos: frozenset[str] | None
) -> list[Candidate]:
    """Files whose names include `last` in any case, by repo and path."""
    tokens = _TOKEN.findall(last)
    if not tokens:
        return []
    scope, params = in_repos(repos)
    rows = db.execute(
        "SELECT f.fid, f.repo, f.path, f.names, f.offsets FROM ref_names "
        "JOIN files f ON f.fid = ref_names.rowid "
        f"WHERE ref_names MATCH ?{scope} ORDER BY f.repo, f.path",
        [" AND ".join(f'"{t}"' for t in tokens), *params],
    ).fetchall()
    return [(int(r[0]), str(r[1]), str(r[2]), str(r[3]), bytes(r[4])) for r in rows]


def name_indexes(names: str, last: str, folded: bool) -> list[int]:
    """Where `last` is in a packed names text: exactly, or ignoring case when `folded`."""
    if folded:
        return folded_indexes(names, last)
    at = name_index(names, last)
    return [at] if at >= 0 else []


def collect_sites(
    db: sqlite3.Connection,
    candidates: list[Candidate],
    last: str,
    folded: bool,
    calls_only: bool,
    limit: int,
) -> list[SymbolRef]:
    """Up to `limit` references to `last` in `candidates`, in their order, then by line."""
    out: list[SymbolRef] = []
    for fid, repo, path, names, offsets in candidates:
        indexes = name_indexes(names, last, folded)
        if not indexes:
            continue
        sites, forms = _sites(db, fid)
        found = decode_sites(names, offsets, sites, forms, indexes, last, folded, calls_only)
        if not found:
            continue
        callers = CallerMap(_file_definitions(db, fid))
        out.extend(
            SymbolRef(repo, path, name, line, callers.caller(line), call, form)
            for line, name, call, form in found
        )
        if len(out) >= limit:
            return out[:limit]
    return out


def decode_sites(
    names: str,
    offsets: bytes,
    sites: bytes,
    forms: bytes,
    indexes: list[int],
    last: str,
    folded: bool,
    calls_only: bool,
) -> list[tuple[int, str, bool, int]]:
    """(line, name as written, call, form) of the names at `indexes`, by line."""
    written = names.split() if folded else []
    found = []
    for i in indexes:
        name = written[i] if folded else last
        codes, shapes = site_codes(offsets, sites, i), site_forms(offsets, forms, i)
        for at, code in enumerate(codes):
            if code & 1 or not calls_only:
                found.append((code >> 1, name, bool(code & 1), shapes[at] if shapes else 0))
    found.sort()
    return found


def _sites(db: sqlite3.Connection, fid: int) -> tuple[bytes, bytes]:
    row = db.execute("SELECT sites, forms FROM files WHERE fid = ?", (fid,)).fetchone()
    return (bytes(row[0]), bytes(row[1])) if row is not None else (b"", b"")


def count_sites(
    db: sqlite3.Connection, candidates: list[Candidate], last: str, folded: bool, calls_only: bool
) -> int:
    """How many references to `last` (or calls of it) `candidates` hold."""
    total = 0
    for fid, _repo, _path, names, offsets in candidates:
        indexes = name_indexes(names, last, folded)
        if not indexes:
            continue
        if not calls_only:
            total += sum(site_count(offsets, i) for i in indexes)
            continue
        sites, _ = _sites(db, fid)
        total += sum(code & 1 for i in indexes for code in site_codes(offsets, sites, i))
    return total


def _file_definitions(db: sqlite3.Connection, fid: int) -> list[SymbolDef]:
    rows = db.execute(
        f"SELECT {_DEF_COLUMNS} FROM defs d JOIN files f ON f.fid = d.fid WHERE d.fid = ?",
        (fid,),
    ).fetchall()
    return [SymbolDef(*row) for row in rows]


def file_facts(db: sqlite3.Connection, repo: str, paths: Iterable[str]) -> dict[str, FileFacts]:
    """The definitions and links of each of `paths` in `repo` that the table holds."""
    wanted = sorted(set(paths))
    out: dict[str, FileFacts] = {}
    for at in range(0, len(wanted), _BATCH):
        batch = wanted[at : at + _BATCH]
        rows = db.execute(
            f"SELECT fid, path, links FROM files WHERE repo = ? "
            f"AND path IN ({', '.join('?' * len(batch))})",
            [repo, *batch],
        ).fetchall()
        for fid, path, links in rows:
            defs = tuple(_file_definitions(db, int(fid)))
            aliases = _file_aliases(db, int(fid))
            links_of = FileLinks.from_text(str(links))
            out[str(path)] = FileFacts(repo, str(path), defs, links_of, aliases)
    return out


def repo_paths(db: sqlite3.Connection, repo: str) -> list[str]:
    return [str(r[0]) for r in db.execute("SELECT path FROM files WHERE repo = ?", (repo,))]


def rank_repo(db: sqlite3.Connection, repo: str) -> list[RankedSymbol]:
    """Every definition of `repo`, most referred to first (see `ranking`)."""
    rows = db.execute(
        f"SELECT d.fid, {_DEF_COLUMNS} FROM defs d JOIN files f ON f.fid = d.fid WHERE f.repo = ?",
        (repo,),
    ).fetchall()
    definitions = [(int(r[0]), SymbolDef(*r[1:])) for r in rows]
    files = (
        FileNames(int(fid), frozenset(str(names).split()))
        for fid, names in db.execute("SELECT fid, names FROM files WHERE repo = ?", (repo,))
    )
    return rank(definitions, files)
