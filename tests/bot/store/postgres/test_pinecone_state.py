"""Pinecone's state in PostgreSQL keeps its document counts per repository and level
(`pc_totals`) with every write, so a query's IDF needs no count(*): through commits that
add, re-send, delete and move chunks and files, across two repositories, a rebuild and a
removal, the counts (in every scope) are SQLite's and the tables' own."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import psycopg

from bot.models import RepoState
from bot.store import StoreSet
from bot.store.records import ChunkRow, FileRow
from tests.support.stores import open_kind, use_database

START = datetime(2026, 1, 1, tzinfo=UTC)
SCOPES = (None, frozenset({"api"}), frozenset({"web"}), frozenset({"api", "web"}))


def chunk(repo: str, path: str, n: int) -> ChunkRow:
    return ChunkRow(f"{repo}#{path}#{n:08x}", repo, path, n % 2 == 0, (n, 100))


def file_row(repo: str, path: str, chunks: list[ChunkRow]) -> FileRow:
    return FileRow(repo, path, "b" * 40, "python", tuple(c.id for c in chunks), (7, len(path)))


def state_of(repo: str) -> RepoState:
    return RepoState(repo, f"/src/{repo}", "main", "a" * 40, START, files=0, chunks=0)


def documents(stores: StoreSet) -> list[tuple[int, ...]]:
    state = stores.pinecone_state
    return [
        (
            state.corpus_stats("chunk", [100], scope).documents,
            state.corpus_stats("file", [7], scope).documents,
            state.corpus_stats("chunk", [], scope).documents,
        )
        for scope in SCOPES
    ]


def table_counts(url: str) -> list[tuple[int, ...]]:
    with psycopg.connect(url) as conn:
        out = []
        for scope in SCOPES:
            names = sorted(scope) if scope is not None else ["api", "web"]
            row = conn.execute(
                "SELECT (SELECT count(*) FROM pc_chunks WHERE repo = ANY(%s)), "
                "(SELECT count(*) FROM pc_files WHERE repo = ANY(%s))",
                (names, names),
            ).fetchone()
            assert row is not None
            out.append((int(row[0]), int(row[1]), int(row[0])))
        return out


def test_document_counts_follow_every_write_like_sqlite(database_url: str, tmp_path: Path) -> None:
    home = tmp_path / "pg"
    use_database(home, database_url)
    postgres, sqlite = open_kind("postgres", home), open_kind("sqlite", tmp_path / "lite")
    api = [chunk("api", f"a{n}.py", n) for n in range(6)]
    web = [chunk("web", f"w{n}.py", n) for n in range(3)]
    steps = [
        lambda s: s.commit(
            state_of("api"),
            chunks=api,
            deleted=(),
            files=[file_row("api", c.path, [c]) for c in api],
            removed_paths=(),
        ),
        lambda s: s.commit(
            state_of("web"),
            chunks=web,
            deleted=(),
            files=[file_row("web", c.path, [c]) for c in web],
            removed_paths=(),
        ),
        # the same chunks sent again (already known) and one file rewritten: no change
        lambda s: s.commit(
            state_of("api"),
            chunks=api[:2],
            deleted=(),
            files=[file_row("api", "a0.py", api[:1])],
            removed_paths=(),
        ),
        # two chunks and a file gone, one file renamed, a chunk deleted twice over
        lambda s: s.commit(
            state_of("api"),
            chunks=[chunk("api", "moved.py", 40)],
            deleted=[api[4].id, api[5].id, api[5].id, "api#never#0"],
            files=[file_row("api", "moved.py", [])],
            removed_paths=["a4.py", "a5.py", "a3.py", "not-there.py"],
        ),
        lambda s: s.remove_repo("web"),
        lambda s: s.replace_all(
            [state_of("api"), state_of("web")],
            [file_row("web", "w0.py", web[:1]), file_row("api", "a0.py", api[:1])],
            [*web, api[0]],
        ),
        lambda s: s.remove_repo("api"),
    ]
    try:
        for n, step in enumerate(steps):
            for stores in (postgres, sqlite):
                step(stores.pinecone_state)
            assert documents(postgres) == documents(sqlite), f"after step {n}"
            assert documents(postgres) == table_counts(database_url), f"after step {n}"
        assert documents(postgres) == [(3, 1, 3), (0, 0, 0), (3, 1, 3), (3, 1, 3)]  # web's
    finally:
        postgres.close()
        sqlite.close()


def test_counts_written_before_the_totals_are_carried_over(
    database_url: str, tmp_path: Path
) -> None:
    """A database migrated to version 6 with a state in it: the totals are filled in."""
    from bot.store.postgres.connection import Database
    from bot.store.postgres.migrations import _migrate
    from bot.store.postgres.schema import MIGRATIONS

    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name TEXT, "
            "applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        for version in sorted(v for v in MIGRATIONS if v < 6):
            for statement in MIGRATIONS[version][1]:
                conn.execute(statement.encode())
            conn.execute("INSERT INTO schema_version (version, name) VALUES (%s, 'x')", (version,))
        conn.execute(
            "INSERT INTO pc_chunks VALUES ('c1', 'api', 'a.py', true, ''), "
            "('c2', 'api', 'a.py', true, ''), ('c3', 'web', 'w.py', false, '')"
        )
        conn.execute("INSERT INTO pc_files VALUES ('api', 'a.py', 'b', 'python', '[]', '')")
        assert _migrate(conn) == [v for v in sorted(MIGRATIONS) if v >= 6]
    database = Database(database_url)
    try:
        from bot.store.postgres.pinecone_state import PostgresPineconeState

        state = PostgresPineconeState(database)
        assert state.corpus_stats("chunk", [], None).documents == 3
        assert state.corpus_stats("chunk", [], frozenset({"api"})).documents == 2
        assert state.corpus_stats("file", [], frozenset({"web"})).documents == 0
        assert state.corpus_stats("file", [], None).documents == 1
    finally:
        database.close()
