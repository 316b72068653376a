"""The PostgreSQL symbol table between processes: a ranking cached by one process is dropped
when another writes the repository (the generation it bumps), and one apply of many files
is one transaction (see also the contract, tests/bot/store/test_base.py)."""

from __future__ import annotations

from pathlib import Path

from bot.symbols.model import Definition, FileSymbols, Reference
from tests.support.stores import open_kind, use_database


def file_with(name: str, uses: tuple[str, ...] = ()) -> FileSymbols:
    refs = tuple(Reference(u, 10 + i, "", True) for i, u in enumerate(uses))
    return FileSymbols((Definition(name, name, "function", 1, 3),), refs)


def test_a_ranking_cached_here_follows_a_write_there(database_url: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    use_database(home, database_url)
    reader, writer = open_kind("postgres", home), open_kind("postgres", home)
    try:
        writer.symbols.apply(
            "api",
            [("a.js", "b1", file_with("alpha")), ("b.js", "b2", file_with("beta", ("alpha",)))],
        )
        first = [r.definition.name for r in reader.symbols.top_symbols("api")]
        assert first[0] == "alpha"
        writer.symbols.apply(
            "api",
            [
                ("c.js", "b3", file_with("gamma", ("beta",))),
                ("d.js", "b4", file_with("delta", ("beta",))),
            ],
        )
        again = [r.definition.name for r in reader.symbols.top_symbols("api")]
        assert again[0] == "beta" and set(again) == {"alpha", "beta", "gamma", "delta"}
        assert reader.symbols.stats("api") == (4, 3)
    finally:
        reader.close()
        writer.close()


def test_references_across_many_files_match_sqlite_at_every_limit(
    database_url: str, tmp_path: Path
) -> None:
    """One query for the callers of every file picked gives what SQLite gives, cut where
    SQLite cuts (within a file too)."""
    files = []
    for n in range(12):
        defs = (
            Definition(f"outer{n}", f"outer{n}", "function", 1, 10),
            Definition(f"inner{n}", f"Box.inner{n}", "method", 12, 30),
        )
        refs = tuple(Reference("send", line, "", line % 3 != 0) for line in (3, 5, 14, 20, 40))
        files.append((f"pkg/m{n:02}.py", f"b{n}", FileSymbols(defs, refs)))
    home = tmp_path / "pg"
    use_database(home, database_url)
    postgres, sqlite = open_kind("postgres", home), open_kind("sqlite", tmp_path / "lite")
    try:
        for stores in (postgres, sqlite):
            stores.symbols.apply("api", files)
        for limit in (1, 4, 7, 50, 100):
            for calls_only in (False, True):
                want = sqlite.symbols.references(
                    "send", repos=None, calls_only=calls_only, limit=limit
                )
                got = postgres.symbols.references(
                    "send", repos=None, calls_only=calls_only, limit=limit
                )
                assert got == want and len(got) == min(limit, 48 if calls_only else 60)
        assert {r.caller for r in want} == {"", *(f"outer{n}" for n in range(12))} | {
            f"Box.inner{n}" for n in range(12)
        }
    finally:
        postgres.close()
        sqlite.close()


def _definition_rows(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM sym_defs").fetchone()
    assert row is not None
    return int(row[0])


def test_a_files_definitions_go_with_it_without_a_foreign_key(
    database_url: str, tmp_path: Path
) -> None:
    """Schema version 6 dropped sym_defs' foreign key (one check per definition doubled an
    ingest); the writer deletes a file's definitions itself, so none are left behind."""
    import psycopg

    home = tmp_path / "home"
    use_database(home, database_url)
    stores = open_kind("postgres", home)
    two = FileSymbols(
        (Definition("a", "a", "function", 1, 3), Definition("b", "b", "function", 4, 6)), ()
    )
    try:
        stores.symbols.apply("api", [("a.py", "b1", two), ("b.py", "b2", file_with("beta"))])
        stores.symbols.apply("web", [("a.py", "b3", file_with("alpha"))])
        assert _definition_rows(database_url) == 4
        stores.symbols.apply("api", [("a.py", "b4", file_with("gamma"))])  # replaced: 2 -> 1
        assert _definition_rows(database_url) == 3
        stores.symbols.apply("api", [], removed=["b.py"])
        assert _definition_rows(database_url) == 2
        assert [d.name for d in stores.symbols.definitions("gamma", repos=None)] == ["gamma"]
        stores.symbols.remove_repo("api")
        assert _definition_rows(database_url) == 1  # web's stays
        assert stores.symbols.stats("web") == (1, 0)
        with psycopg.connect(database_url) as conn:
            keys = conn.execute(
                "SELECT count(*) FROM pg_constraint WHERE conrelid = 'sym_defs'::regclass "
                "AND contype = 'f'"
            ).fetchone()
        assert keys == (0,)
    finally:
        stores.close()
