"""A damaged index file set aside and rebuilt: what to rebuild it from.

The index is the one store that cannot start afresh empty: its rows come from the
repositories. When SQLite finds `index.sqlite` damaged (at opening or in any statement)
the file is set aside (`bot.store.aside`), a new one is started, and the repositories
it held are written into the new file as `meta.rebuild` for the ingest line to index
again (`bot.jobs`: whichever process ingests takes them; a repository leaves the list
when its first change set into the new file commits).

Which repositories: those the damaged file still lists when its `repos` table can be
read; and always those of `index.sqlite.sources.json`, the list this index writes beside
itself after every change to its repositories (a file whose header is garbled lists
nothing itself). The clones in the data directory serve the rebuild; a repository
whose clone is gone is fetched again.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

from bot.index.base import Rebuild
from bot.models import RepoState

log = logging.getLogger(__name__)

WHAT = "search index"
REMEDY = "it is being rebuilt from the repositories"
REBUILDING = (
    "The search index was damaged; it has been set aside and is being rebuilt from the "
    "repositories. Please ask again in a few minutes."
)
_KEY = "rebuild"


def sources_path(index: Path) -> Path:
    return index.with_name(index.name + ".sources.json")


def remember(path: Path, states: Iterable[RepoState]) -> None:
    """Write the repositories' sources beside the index (best effort, atomically)."""
    rows = [{"name": s.name, "source": s.source, "branch": s.branch} for s in states]
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        partial.write_text(json.dumps(rows, indent=1), encoding="utf-8")
        partial.replace(path)
    except OSError as exc:  # the list only helps a rebuild; the index itself is fine
        log.warning("the index's list of sources was not written: %s", exc)
        with contextlib.suppress(OSError):
            partial.unlink()


def wanted(kept: Path, sources: Path) -> list[Rebuild]:
    """What the set-aside file `kept` held, by its own `repos` table if it can still be read,
    and by the list of sources written beside it; each repository once."""
    found = {r.name: r for r in _listed(sources)}
    found |= {r.name: r for r in _salvaged(kept)}  # the file's own word is the later one
    return [found[name] for name in sorted(found)]


def store(conn: sqlite3.Connection, rebuilds: Sequence[Rebuild]) -> None:
    """Record what the new file awaits (in the caller's transaction)."""
    rows = [{"name": r.name, "source": r.source, "branch": r.branch} for r in rebuilds]
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (_KEY, json.dumps(rows)),
    )


def pending(conn: sqlite3.Connection) -> list[Rebuild]:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (_KEY,)).fetchone()
    return _parsed(row[0]) if row is not None else []


def done(conn: sqlite3.Connection, repo: str) -> None:
    """`repo` is in the new file now (in the transaction that wrote it)."""
    left = [r for r in pending(conn) if r.name != repo]
    if left:
        store(conn, left)
    else:
        conn.execute("DELETE FROM meta WHERE key = ?", (_KEY,))


def _listed(path: Path) -> list[Rebuild]:
    try:
        return _parsed(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return []


def _parsed(text: str) -> list[Rebuild]:
    try:
        rows = json.loads(text)
    except ValueError:
        return []
    if not isinstance(rows, list):
        return []
    return [
        Rebuild(str(r["name"]), str(r["source"]), str(r.get("branch") or ""))
        for r in rows
        if isinstance(r, dict) and r.get("name") and r.get("source")
    ]


def _salvaged(kept: Path) -> list[Rebuild]:
    """The damaged file's repositories, when SQLite can still read that much of it."""
    try:
        # immutable: no lock and no -wal/-shm beside the kept file
        conn = sqlite3.connect(f"file:{kept}?mode=ro&immutable=1", uri=True)
    except sqlite3.Error:
        return []
    try:
        rows = conn.execute("SELECT name, source, branch FROM repos").fetchall()
    except sqlite3.Error:
        return []
    finally:
        conn.close()
    return [Rebuild(str(n), str(s), str(b or "")) for n, s, b in rows if n and s]
