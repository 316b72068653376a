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
