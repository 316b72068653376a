"""Pinecone's repository state in PostgreSQL (`PineconeStateRecords`): what `bot.store.
pinecone_state` keeps in a SQLite file, shared by every process, so a web process
answers with the commit the scheduler indexed last.

Tables `pc_repos`, `pc_files`, `pc_chunks`, `pc_df` (document frequencies per
repository and level), `pc_totals` (documents per repository and level, so a query's
IDF counts no rows) and `pc_pending` (the journal). The same rules as the SQLite
state: one transaction a write, written after Pinecone accepted the data; term sets
are packed the same way (`bot.store.pinecone_state`). Every read is one statement
in autocommit (`Database.read`: one round trip, one snapshot), so it never mixes two
commits. Bulk writes are set statements (`= ANY`) and `executemany` (pipelined), not
a round trip a row.
There is no damaged file to set aside here, so `rebuild_wanted` is always False;
a database that holds no repository beside a namespace that holds records (a
deployment moving from the SQLite state file) is refilled from Pinecone by the first
process that starts (`bot.wiring.make_index`), or by `codecite init-index --rebuild-state`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from bot.models import FileEntry, RepoState
from bot.store.pinecone_state import CHUNK_LEVEL, FILE_LEVEL, pack_terms, unpack_terms
from bot.store.postgres.connection import Database
from bot.store.records import ChunkRow, CorpusStats, Counts, FileRow

if TYPE_CHECKING:
    import psycopg

    Conn = psycopg.Connection[tuple[object, ...]]

_TABLES = ("pc_repos", "pc_files", "pc_chunks", "pc_df", "pc_pending", "pc_totals")


def _int(value: object) -> int:
    return int(str(value))


class PostgresPineconeState:
    def __init__(self, database: Database) -> None:
        self._db = database

    def close(self) -> None:
        """The pool belongs to the store set (closed with it)."""

    def rebuild_wanted(self) -> bool:
        return False

    # --- reads -------------------------------------------------------------------------

    def repo_states(self) -> list[RepoState]:
        rows = self._db.read(
            lambda c: c.execute(
                "SELECT name, source, branch, commit_sha, indexed_at, web_url, files, chunks "
                "FROM pc_repos ORDER BY name"
            ).fetchall()
        )
        return [_repo_state(r) for r in rows]

    def manifest(self, repo: str) -> dict[str, FileEntry]:
        rows = self._db.read(
            lambda c: c.execute(
                "SELECT path, blob, language, chunk_ids FROM pc_files WHERE repo = %s "
                "ORDER BY path",
                (repo,),
            ).fetchall()
        )
        return {
            str(path): FileEntry(str(path), str(blob), str(lang), _ids(ids))
            for path, blob, lang, ids in rows
        }

    def file_chunk_ids(self, repo: str, path: str) -> list[str]:
        def read(c: Conn) -> list[str]:
            row = c.execute(  # one statement: one snapshot
                "SELECT (SELECT chunk_ids FROM pc_files WHERE repo = %s AND path = %s), "
                "ARRAY(SELECT id FROM pc_chunks WHERE repo = %s AND path = %s ORDER BY id)",
                (repo, path, repo, path),
            ).fetchone()
            assert row is not None
            listed, chunks = row
            ids = chunks if isinstance(chunks, list) else []
            return list(dict.fromkeys([*_ids(listed), *(str(i) for i in ids)]))

        return self._db.read(read)

    def repo_chunks(self, repo: str) -> dict[str, str]:
        rows = self._db.read(
            lambda c: c.execute(
                "SELECT id, path FROM pc_chunks WHERE repo = %s", (repo,)
            ).fetchall()
        )
        return {str(cid): str(path) for cid, path in rows}

    def pending(self, repo: str) -> list[str]:
        rows = self._db.read(
            lambda c: c.execute("SELECT id FROM pc_pending WHERE repo = %s", (repo,)).fetchall()
        )
        return [str(r[0]) for r in rows]

    def corpus_stats(
        self, level: str, terms: Sequence[int], repos: frozenset[str] | None
    ) -> CorpusStats:
        scope = "" if repos is None else " AND repo = ANY(%s)"
        names = [] if repos is None else [sorted(repos)]
        # One statement (one snapshot): the document count is the row without a term.
        sql = f"SELECT NULL::bigint, COALESCE(SUM(docs), 0) FROM pc_totals WHERE level = %s{scope}"
        params: list[object] = [level, *names]
        if terms:
            sql += (
                f" UNION ALL SELECT term, SUM(n) FROM pc_df WHERE level = %s AND term = ANY(%s)"
                f"{scope} GROUP BY term"
            )
            params += [level, list(terms), *names]

        def read(c: Conn) -> CorpusStats:
            docs, df = 0, {}
            for term, n in c.execute(sql, params):
                if term is None:
                    docs = _int(n)
                else:
                    df[_int(term)] = _int(n)
            return CorpusStats(docs, df)

        return self._db.read(read)

    def counts(self) -> Counts:
        def read(c: Conn) -> Counts:
            row = c.execute(
                "SELECT (SELECT count(*) FROM pc_repos), (SELECT count(*) FROM pc_files), "
                "(SELECT count(*) FROM pc_chunks), "
                "(SELECT count(*) FILTER (WHERE dense) FROM pc_chunks)"
            ).fetchone()
            assert row is not None
            return Counts(*(_int(v) for v in row))

        return self._db.read(read)

    def record_count(self) -> int:
        c = self.counts()
        return c.chunks + c.files + c.repos

    # --- writes ------------------------------------------------------------------------

    def journal(self, repo: str, ids: Iterable[str]) -> None:
        rows = [(repo, i) for i in dict.fromkeys(ids)]
        if not rows:
            return
        self._db.run(
            lambda c: c.cursor().executemany(
                "INSERT INTO pc_pending (repo, id) VALUES (%s, %s) ON CONFLICT DO NOTHING", rows
            )
        )

    def commit(
        self,
        state: RepoState,
        *,
        chunks: Sequence[ChunkRow],
        deleted: Iterable[str],
        files: Sequence[FileRow],
        removed_paths: Iterable[str],
    ) -> None:
        repo = state.name
        gone = list(dict.fromkeys(deleted))
        paths = list(dict.fromkeys([*removed_paths, *(f.path for f in files)]))

        def write(c: Conn) -> None:
            chunk_delta: Counter[int] = Counter()
            file_delta: Counter[int] = Counter()
            docs: Counter[tuple[str, str]] = Counter()  # documents added per (repo, level)
            if gone:
                for owner, terms in c.execute(
                    "DELETE FROM pc_chunks WHERE id = ANY(%s) RETURNING repo, terms", (gone,)
                ):
                    chunk_delta.subtract(unpack_terms(_bytes(terms)))
                    docs[str(owner), CHUNK_LEVEL] -= 1
            _add_chunks(c, chunks, chunk_delta, docs)
            if paths:
                for (terms,) in c.execute(
                    "DELETE FROM pc_files WHERE repo = %s AND path = ANY(%s) RETURNING terms",
                    (repo, paths),
                ):
                    file_delta.subtract(unpack_terms(_bytes(terms)))
                    docs[repo, FILE_LEVEL] -= 1
            _add_files(c, files, file_delta)
            for row in files:
                docs[row.repo, FILE_LEVEL] += 1
            _apply_df(c, repo, CHUNK_LEVEL, chunk_delta)
            _apply_df(c, repo, FILE_LEVEL, file_delta)
            _apply_totals(c, docs)
            c.execute("DELETE FROM pc_pending WHERE repo = %s", (repo,))
            _put_repo(c, state)

        self._db.run(write)

    def hide_repo(self, repo: str) -> None:
        self._db.run(lambda c: c.execute("DELETE FROM pc_repos WHERE name = %s", (repo,)))

    def remove_repo(self, repo: str) -> None:
        def write(c: Conn) -> None:
            for table in _TABLES:
                column = "name" if table == "pc_repos" else "repo"
                c.execute(f"DELETE FROM {table} WHERE {column} = %s".encode(), (repo,))

        self._db.run(write)

    def replace_all(
        self, states: Sequence[RepoState], files: Sequence[FileRow], chunks: Sequence[ChunkRow]
    ) -> None:
        def write(c: Conn) -> None:
            c.execute(f"TRUNCATE {', '.join(_TABLES)}".encode())
            deltas: dict[tuple[str, str], Counter[int]] = {}
            _add_chunks(c, chunks, None)
            for chunk in chunks:
                deltas.setdefault((chunk.repo, CHUNK_LEVEL), Counter()).update(set(chunk.terms))
            for row in files:
                deltas.setdefault((row.repo, FILE_LEVEL), Counter()).update(set(row.terms))
            _add_files(c, files, None)
            for (repo, level), delta in deltas.items():
                _apply_df(c, repo, level, delta)
            for table, level in (("pc_chunks", CHUNK_LEVEL), ("pc_files", FILE_LEVEL)):
                c.execute(
                    f"INSERT INTO pc_totals SELECT repo, %s, count(*) FROM {table} GROUP BY repo",
                    (level,),
                )
            for s in states:
                _put_repo(c, s)

        self._db.run(write)


def _bytes(value: object) -> bytes:
    assert isinstance(value, bytes | memoryview)
    return bytes(value)


def _ids(value: object) -> tuple[str, ...]:
    return tuple(str(i) for i in value) if isinstance(value, list) else ()


def _add_chunks(
    c: Conn,
    chunks: Sequence[ChunkRow],
    delta: Counter[int] | None,
    docs: Counter[tuple[str, str]] | None = None,
) -> None:
    if not chunks:
        return
    if delta is not None:  # only chunks new to the state count towards frequencies
        known = {
            str(r[0])
            for r in c.execute(
                "SELECT id FROM pc_chunks WHERE id = ANY(%s)", ([ch.id for ch in chunks],)
            )
        }
        for chunk in chunks:
            if chunk.id not in known:
                delta.update(set(chunk.terms))
                known.add(chunk.id)
                if docs is not None:
                    docs[chunk.repo, CHUNK_LEVEL] += 1
    c.cursor().executemany(
        "INSERT INTO pc_chunks (id, repo, path, dense, terms) VALUES (%s, %s, %s, %s, %s) "
        "ON CONFLICT (id) DO UPDATE SET dense = excluded.dense",
        [(ch.id, ch.repo, ch.path, bool(ch.dense), pack_terms(ch.terms)) for ch in chunks],
    )


def _add_files(c: Conn, files: Sequence[FileRow], delta: Counter[int] | None) -> None:
    from psycopg.types.json import Jsonb

    if not files:
        return
    if delta is not None:
        for row in files:
            delta.update(set(row.terms))
    c.cursor().executemany(
        "INSERT INTO pc_files (repo, path, blob, language, chunk_ids, terms) "
        "VALUES (%s, %s, %s, %s, %s, %s)",
        [
            (f.repo, f.path, f.blob, f.language, Jsonb(list(f.chunk_ids)), pack_terms(f.terms))
            for f in files
        ],
    )


def _apply_df(c: Conn, repo: str, level: str, delta: Counter[int]) -> None:
    changes = [(repo, level, term, n) for term, n in delta.items() if n]
    if not changes:
        return
    c.cursor().executemany(
        "INSERT INTO pc_df (repo, level, term, n) VALUES (%s, %s, %s, %s) "
        "ON CONFLICT (repo, level, term) DO UPDATE SET n = pc_df.n + excluded.n",
        changes,
    )
    c.execute("DELETE FROM pc_df WHERE repo = %s AND level = %s AND n <= 0", (repo, level))


def _apply_totals(c: Conn, docs: Counter[tuple[str, str]]) -> None:
    changes = [(repo, level, n) for (repo, level), n in docs.items() if n]
    if changes:
        c.cursor().executemany(
            "INSERT INTO pc_totals (repo, level, docs) VALUES (%s, %s, %s) "
            "ON CONFLICT (repo, level) DO UPDATE SET docs = pc_totals.docs + excluded.docs",
            changes,
        )


def _put_repo(c: Conn, s: RepoState) -> None:
    at = s.indexed_at if s.indexed_at.tzinfo else s.indexed_at.replace(tzinfo=UTC)
    c.execute(
        "INSERT INTO pc_repos VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (name) DO "
        "UPDATE SET source = excluded.source, branch = excluded.branch, "
        "commit_sha = excluded.commit_sha, indexed_at = excluded.indexed_at, "
        "web_url = excluded.web_url, files = excluded.files, chunks = excluded.chunks",
        (s.name, s.source, s.branch, s.commit, at, s.web_url, s.files, s.chunks),
    )


def _repo_state(row: Sequence[object]) -> RepoState:
    name, source, branch, commit, indexed_at, web_url, files, chunks = row
    assert isinstance(indexed_at, datetime)
    return RepoState(
        str(name),
        str(source),
        str(branch),
        str(commit),
        indexed_at.astimezone(UTC),
        str(web_url),
        _int(files),
        _int(chunks),
    )
