"""The history store's tables and rows, shared by its SQLite and PostgreSQL implementations:
one place says how each value becomes columns and back (`?` or `%s` placeholders)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from bot.store.history_records import CommitRecord, HistoryHead, PullRequest, TagRecord

# Column lists, in the order of the row functions below.
COMMIT_COLUMNS = (
    "repo, seq, sha, parents, author, email, authored, committed, subject, body, tags, prs, "
    "refs, paths, ranges, excerpt, symbols"
)
HEAD_COLUMNS = "repo, head, horizon, oldest, complete, commits"
TAG_COLUMNS = "repo, name, sha, committed"
PR_COLUMNS = "repo, number, title, body, url, state"


def tables(blob: str, big: str) -> list[str]:
    """CREATE statements; `blob`/`big`: the backend's text-blob and 64-bit integer types."""
    return [
        f"""CREATE TABLE IF NOT EXISTS hist_heads (
            repo TEXT PRIMARY KEY, head TEXT NOT NULL, horizon TEXT NOT NULL,
            oldest {big} NOT NULL, complete INTEGER NOT NULL, commits INTEGER NOT NULL
        )""",
        f"""CREATE TABLE IF NOT EXISTS hist_commits (
            repo TEXT NOT NULL, seq INTEGER NOT NULL, sha TEXT NOT NULL, parents TEXT NOT NULL,
            author TEXT NOT NULL, email TEXT NOT NULL, authored {big} NOT NULL,
            committed {big} NOT NULL, subject TEXT NOT NULL, body {blob} NOT NULL,
            tags TEXT NOT NULL, prs TEXT NOT NULL, refs TEXT NOT NULL, paths {blob} NOT NULL,
            ranges {blob} NOT NULL, excerpt {blob} NOT NULL, symbols {blob} NOT NULL,
            PRIMARY KEY (repo, seq)
        )""",
        "CREATE UNIQUE INDEX IF NOT EXISTS hist_commits_sha ON hist_commits (repo, sha)",
        f"""CREATE TABLE IF NOT EXISTS hist_lines (
            repo TEXT NOT NULL, path TEXT NOT NULL, runs {blob} NOT NULL,
            PRIMARY KEY (repo, path)
        )""",
        f"""CREATE TABLE IF NOT EXISTS hist_tags (
            repo TEXT NOT NULL, name TEXT NOT NULL, sha TEXT NOT NULL, committed {big} NOT NULL,
            PRIMARY KEY (repo, name)
        )""",
        f"""CREATE TABLE IF NOT EXISTS hist_prs (
            repo TEXT NOT NULL, number INTEGER NOT NULL, title TEXT NOT NULL,
            body {blob} NOT NULL, url TEXT NOT NULL, state TEXT NOT NULL,
            PRIMARY KEY (repo, number)
        )""",
    ]


TABLES = ("hist_heads", "hist_commits", "hist_lines", "hist_tags", "hist_prs")


def insert(table: str, columns: str, mark: str, *, upsert_key: str = "") -> str:
    count = len(columns.split(","))
    sql = f"INSERT INTO {table} ({columns}) VALUES ({', '.join([mark] * count)})"
    if upsert_key:
        keys = {k.strip() for k in upsert_key.split(",")}
        sets = ", ".join(
            f"{c} = excluded.{c}" for c in (c.strip() for c in columns.split(",")) if c not in keys
        )
        sql += f" ON CONFLICT ({upsert_key}) DO UPDATE SET {sets}"
    return sql


def _join(items: Sequence[object]) -> str:
    return json.dumps(list(items), separators=(",", ":"))


def _split(text: object) -> list[object]:
    value = json.loads(str(text)) if text else []
    return value if isinstance(value, list) else []


def commit_row(repo: str, c: CommitRecord) -> tuple[object, ...]:
    return (
        repo, c.seq, c.sha, " ".join(c.parents), c.author, c.email, c.authored, c.committed,
        c.subject, c.body, _join(c.tags), _join(c.prs), _join(c.refs), _join(c.paths),
        c.ranges, c.excerpt, _join(c.symbols),
    )  # fmt: skip


def commit_from_row(row: Sequence[object]) -> CommitRecord:
    return CommitRecord(
        seq=int(str(row[1])),
        sha=str(row[2]),
        parents=tuple(str(row[3]).split()),
        author=str(row[4]),
        email=str(row[5]),
        authored=int(str(row[6])),
        committed=int(str(row[7])),
        subject=str(row[8]),
        body=str(row[9]),
        tags=tuple(str(t) for t in _split(row[10])),
        prs=tuple(int(str(n)) for n in _split(row[11])),
        refs=tuple(int(str(n)) for n in _split(row[12])),
        paths=tuple(str(p) for p in _split(row[13])),
        ranges=str(row[14]),
        excerpt=str(row[15]),
        symbols=tuple(str(s) for s in _split(row[16])),
    )


def head_row(h: HistoryHead) -> tuple[object, ...]:
    return (h.repo, h.head, h.horizon, h.oldest, int(h.complete), h.commits)


def head_from_row(row: Sequence[object]) -> HistoryHead:
    return HistoryHead(
        repo=str(row[0]),
        head=str(row[1]),
        horizon=str(row[2]),
        oldest=int(str(row[3])),
        complete=bool(int(str(row[4]))),
        commits=int(str(row[5])),
    )


def tag_row(repo: str, t: TagRecord) -> tuple[object, ...]:
    return (repo, t.name, t.sha, t.committed)


def tag_from_row(row: Sequence[object]) -> TagRecord:
    return TagRecord(str(row[1]), str(row[2]), int(str(row[3])))


def pr_row(repo: str, p: PullRequest) -> tuple[object, ...]:
    return (repo, p.number, p.title, p.body, p.url, p.state)


def pr_from_row(row: Sequence[object]) -> PullRequest:
    return PullRequest(int(str(row[1])), str(row[2]), str(row[3]), str(row[4]), str(row[5]))
