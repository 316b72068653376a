"""Symbol-table ingest of a tree into SQLite vs PostgreSQL: the write alone.

The tree's symbols are extracted once, as an ingest does (`SymbolSync.read_missing`:
scrub, then `extract_text`), in worker processes; then each repetition writes
all of them into an empty table of each backend with one `SymbolTable.apply`, as
`SymbolSync.write` does at the end of an ingest. Repetitions alternate the
backends (SQLite, PostgreSQL, SQLite, ...) so drift of the machine hits both.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from bench.common import median
from bot.code.languages import language_for
from bot.ingest.secrets import scrub
from bot.ingest.symbol_sync import symbols_key
from bot.store import open_store
from bot.symbols.extract import extract_text
from bot.symbols.packed import PackedSymbols

Found = tuple[str, str, PackedSymbols]  # (path, key, symbols): what SymbolSync.write applies
MAX_FILE_BYTES = 1_000_000  # Settings.max_file_bytes' default: larger files are not ingested


def source_files(tree: Path) -> list[Path]:
    """The files an ingest would parse for symbols (a known language, not too large)."""
    skip = {"site-packages", "__pycache__"}
    return sorted(
        p
        for p in tree.rglob("*")
        if p.is_file()
        and not skip.intersection(p.relative_to(tree).parts)
        and language_for(p.name)
        and p.stat().st_size <= MAX_FILE_BYTES
    )


def _extract(args: tuple[str, str]) -> Found:
    path, rel = args
    raw = Path(path).read_text(encoding="utf-8", errors="replace")
    text = scrub(raw, rel).text
    return rel, symbols_key(f"bench|{rel}"), extract_text(rel, text, language_for(rel) or "text")


def extract_tree(tree: Path, limit: int | None = None) -> list[Found]:
    files = source_files(tree)[:limit]
    jobs = [(str(p), p.relative_to(tree).as_posix()) for p in files]
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        return list(pool.map(_extract, jobs, chunksize=16))


def _apply_seconds(home: Path, database_url: str | None, found: Sequence[Found]) -> float:
    stores = open_store(home, database_url=database_url)
    try:
        table = stores.symbols
        table.blobs("stdlib")  # opened, migrated, connected: not part of the write
        began = time.perf_counter()
        table.apply("stdlib", found, commit="0" * 40)
        seconds = time.perf_counter() - began
        defs, refs = table.stats("stdlib")
        if not defs or not refs:
            raise RuntimeError(f"the {'postgres' if database_url else 'sqlite'} table is empty")
        return seconds
    finally:
        stores.close()


def compare(
    found: Sequence[Found], *, homes: Path, new_database: Any, repetitions: int
) -> dict[str, Any]:
    """`new_database(name)` gives an empty database's URL for each PostgreSQL repetition."""
    seconds: dict[str, list[float]] = {"sqlite": [], "postgres": []}
    for rep in range(repetitions):
        seconds["sqlite"].append(_apply_seconds(homes / f"symbols-{rep}", None, found))
        url = new_database(f"bench_symbols_{rep}")
        seconds["postgres"].append(_apply_seconds(homes / f"unused-{rep}", url, found))
    lite, pg = median(seconds["sqlite"]), median(seconds["postgres"])
    return {
        "files": len(found),
        "definitions": sum(len(p.defs) for _, _, p in found),
        "references": sum(len(p.sites) // 4 for _, _, p in found),
        "repetitions": repetitions,
        "sqlite": {"median_s": round(lite, 4), "runs_s": [round(s, 4) for s in seconds["sqlite"]]},
        "postgres": {
            "median_s": round(pg, 4),
            "runs_s": [round(s, 4) for s in seconds["postgres"]],
        },
        "ratio": round(pg / lite, 3) if lite else None,
    }
